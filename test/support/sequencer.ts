import { existsSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Vitest's order, except that the files named in `first` (paths from the repository root) start
 * before the others of their group, in that order.
 * Vitest runs the files it has timings for longest first, but a clean clone (CI) has none, and
 * then it goes by file size: a file that takes a minute while waiting on its processes, started
 * last, runs alone at the end of its group while the machine idles.
 */
export function startingWith(first: readonly string[]): typeof BaseSequencer {
  // A name that matches no file would be ordered nowhere, silently.
  const missing = first.filter((file) => !existsSync(resolve(import.meta.dirname, '../..', file)))
  if (missing.length > 0) throw new Error(`vitest.config.ts names test files that do not exist: ${missing.join(', ')}`)
  const rank = new Map(first.map((file, n) => [file, n]))
  return class StartingWith extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files)
      const rankOf = (spec: TestSpecification) => rank.get(relative(this.ctx.config.root, spec.moduleId)) ?? first.length
      // Array.prototype.sort is stable: the files outside `first` keep vitest's order.
      return sorted.sort((a, b) => rankOf(a) - rankOf(b))
    }
  }
}
