/** Longest one undo step may take: a stuck step must not keep the others (or Ctrl-C) waiting. */
const STEP_TIMEOUT_MS = 15_000

/**
 * Everything a run creates (processes, the database, Redis keys, directories), undone in reverse
 * order at the end: after a normal run, after a failed step, and on Ctrl-C. A resource registered
 * once the run is closing (a process that was starting when Ctrl-C came) is undone at once.
 */
export class Cleanup {
  private readonly steps: Array<{ what: string; undo: () => Promise<unknown> }> = []
  private closing: Promise<void> | undefined
  /** The signal that interrupted the run, if one did. */
  interruptedBy: NodeJS.Signals | undefined

  get isClosing(): boolean {
    return this.closing !== undefined
  }

  /** Registers how to undo `what`; call it as soon as the resource exists (or just before). */
  defer(what: string, undo: () => Promise<unknown>): void {
    if (this.closing) void this.closing.then(() => this.undo({ what, undo }))
    else this.steps.push({ what, undo })
  }

  /** Undoes everything registered, newest first; reports a step that fails and goes on. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const step of this.steps.reverse()) await this.undo(step)
    })()
    return this.closing
  }

  /** On SIGINT, SIGTERM or SIGHUP: undo everything, then exit 130. Signals during the cleanup are ignored. */
  closeOnSignals(): void {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.on(signal, () => {
        if (this.interruptedBy) return
        this.interruptedBy = signal
        process.stderr.write(`\n${signal}: stopping what the benchmark started and removing its data…\n`)
        void this.close().finally(() => process.exit(130))
      })
    }
  }

  private async undo(step: { what: string; undo: () => Promise<unknown> }): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`gave up after ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS)
    })
    try {
      await Promise.race([step.undo(), late])
    } catch (error) {
      process.stderr.write(`cleanup: could not undo ${step.what}: ${(error as Error).message}\n`)
    } finally {
      clearTimeout(timer)
    }
  }
}
