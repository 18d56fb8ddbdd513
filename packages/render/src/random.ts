import { createHash } from 'node:crypto'

/**
 * A small seeded generator (mulberry32): the same letter id always gives the same strokes,
 * so a reprint is identical to the first print.
 */
export function seededRandom(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0)
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A value in [-1, 1). */
export const wobble = (random: () => number) => random() * 2 - 1
