import bwipjs from 'bwip-js'

/**
 * The bars of a Code 128 symbol of `text`, as widths in modules from its left edge: bar, space,
 * bar… (bwip-js encodes; the drawing is ours, in vector, so it stays sharp at any printer's
 * resolution, and a pen plotter can fill the same bars). Quiet zones are not included: leave ten
 * modules clear on each side.
 */
export function code128Bars(text: string): number[] {
  const [symbol] = bwipjs.raw({ bcid: 'code128', text })
  if (!symbol || !('sbs' in symbol)) throw new Error(`bwip-js gave no linear symbol for ${text}`)
  return symbol.sbs
}

/** A Code 128 symbol's width in modules. */
export const barsWidth = (bars: number[]) => bars.reduce((sum, width) => sum + width, 0)

/** One bar of a symbol: its left edge and width, in the unit of the module it was laid out with. */
export interface Bar {
  x: number
  width: number
}

/**
 * The bars of a Code 128 symbol of `text` laid out from `x`, `module` per module: the one place
 * that turns the encoding into bars, for the printer's rectangles and the plotter's hatching alike.
 */
export function code128Layout(text: string, x: number, module: number): Bar[] {
  const layout: Bar[] = []
  let at = x
  code128Bars(text).forEach((modules, index) => {
    // Even entries are bars, odd ones the spaces between them.
    if (index % 2 === 0) layout.push({ x: at, width: modules * module })
    at += modules * module
  })
  return layout
}
