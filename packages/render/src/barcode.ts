import bwipjs from 'bwip-js'

/**
 * The bars of a Code 128 symbol of `text`, as widths in modules from its left edge: bar, space,
 * bar… (bwip-js encodes; the drawing is ours, in vector, so it stays sharp at any printer's
 * resolution). Quiet zones are not included: leave ten modules clear on each side.
 */
export function code128Bars(text: string): number[] {
  const [symbol] = bwipjs.raw({ bcid: 'code128', text })
  if (!symbol || !('sbs' in symbol)) throw new Error(`bwip-js gave no linear symbol for ${text}`)
  return symbol.sbs
}

/** A Code 128 symbol's width in modules. */
export const barsWidth = (bars: number[]) => bars.reduce((sum, width) => sum + width, 0)
