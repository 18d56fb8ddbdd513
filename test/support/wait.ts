/** Resolves after `ms` (none for a negative `ms`). */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

/**
 * Resolves with the first value of `check` that is neither false nor undefined, asking every
 * `everyMs`; fails after `timeoutMs`, saying what it waited for. The ceiling is far above what
 * the wait takes on an idle machine: a busy one makes the test slower, not red.
 */
export async function until<V>(
  what: string,
  check: () => V | false | undefined | Promise<V | false | undefined>,
  { timeoutMs = 60_000, everyMs = 50 } = {},
): Promise<V> {
  let timer: NodeJS.Timeout | undefined
  let waiting = true
  const ceiling = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${timeoutMs} ms for ${what}`)), timeoutMs)
  })
  const poll = async (): Promise<V> => {
    for (;;) {
      const value = await check()
      if (value !== false && value !== undefined) return value
      if (!waiting) return undefined as never
      await sleep(everyMs)
    }
  }
  try {
    return await Promise.race([poll(), ceiling])
  } finally {
    waiting = false
    clearTimeout(timer)
  }
}
