/**
 * Reads Code 128 bars back as bwip-js's widths (bar, space, bar…) in modules, from where each bar
 * lies: `module` is the width of a module in the bars' unit (0.3 mm in points for a PDF, in
 * millimetres for a plotter file). Whatever drew the bars, they must round to the symbol's widths.
 */
export function barWidths(bars: Array<{ x: number; width: number }>, module: number): number[] {
  const sorted = [...bars].sort((a, b) => a.x - b.x)
  return sorted.flatMap((bar, index) => {
    const next = sorted[index + 1]
    const width = Math.round(bar.width / module)
    return next ? [width, Math.round((next.x - bar.x - bar.width) / module)] : [width]
  })
}
