/** A piece of work that did not finish in the time it was given (Redis not answering, say). */
export class TimedOut extends Error {
  override name = 'TimedOut'
}

/** Rejects when `work` takes longer than `ms` (BullMQ waits for Redis as long as it takes). */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/** The background loops' wait between rounds, which `end()` cuts short (a poke, a stop). */
export class Pause {
  private wake: (() => void) | undefined

  for(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.wake = undefined
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.wake = done
    })
  }

  end(): void {
    this.wake?.()
  }
}
