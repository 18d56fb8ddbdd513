import { describe, expect, it } from 'vitest'
import { clipToBox } from '../src/paths.js'

describe('clipToBox: a signature’s strokes cut to the box it declares', () => {
  it('keeps a stroke inside whole, cuts one that leaves and comes back into two, drops one outside', () => {
    const inside: Array<[number, number]> = [
      [1, 1],
      [5, 5],
      [9, 1],
    ]
    const leavesAndReturns: Array<[number, number]> = [
      [2, 5],
      [2, 15],
      [8, 15],
      [8, 5],
    ]
    const outside: Array<[number, number]> = [
      [20, 20],
      [30, 30],
    ]
    expect(clipToBox([inside, leavesAndReturns, outside], 10, 10)).toEqual([
      inside,
      [
        [2, 5],
        [2, 10],
      ],
      [
        [8, 10],
        [8, 5],
      ],
    ])
  })

  it('cuts a line that crosses the whole box at both edges', () => {
    expect(
      clipToBox(
        [
          [
            [-10, 5],
            [20, 5],
          ],
        ],
        10,
        10,
      ),
    ).toEqual([
      [
        [0, 5],
        [10, 5],
      ],
    ])
  })
})
