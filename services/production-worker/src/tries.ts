export interface Tries {
  /** Runs of `work` in all, the first included. */
  attempts: number
  /** The pause before the second run; each later pause is this times the runs so far. */
  pauseMs: number
  /** Whether a failure is worth another run; any failure by default. */
  again?: (error: unknown) => boolean
}

/** `work` until it succeeds, run again after a failure `again` accepts, up to `attempts` runs: the last failure is thrown. */
export async function withTries<T>(work: () => Promise<T>, { attempts, pauseMs, again = () => true }: Tries): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= attempts || !again(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, pauseMs * attempt))
    }
  }
}
