/**
 * The handwriting's rows: how many glyphs of a 600-character card have a shape of their own, and
 * what the card costs the plotter, per hand. Drawn on this process's thread, like the rendering rows.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { loadConfig } from '@letters/config'
import { fontNames, joinedHands, type FontName } from '@letters/contracts'
import { plotFigures, plotLetter, plotSeconds, renderCard, type LetterToRender } from '@letters/render'
import { cardMessage } from '@letters/render/bench/render-throughput'
import { filledShapes, twinReport } from '@letters/test/support/glyph-twins'
import { figure, type Row } from './report.js'

const MESSAGE_LENGTH = 600

const card = (fontName: string, ownFont?: LetterToRender['ownFont']): LetterToRender => ({
  letterId: '5c0e2f4a-1b3d-4e6f-8a9b-0c1d2e3f4a5b',
  code: 'BENCH00002',
  fontName,
  ownFont,
  message: cardMessage(MESSAGE_LENGTH),
  signature: 'Ana, de Papelería Luna',
  recipientLines: ['Lucía García Pérez', 'Calle Mayor 12, 3º B', '28013 Madrid'],
  senderLines: ['Papelería Luna'],
})

/** Per hand, the share of a card's glyphs (read from its PDF) that no other glyph matches after the best affine fit within 2 % of its height. */
export async function measureTwins(): Promise<Array<{ fontName: string; share: number; glyphs: number }>> {
  const shares = []
  for (const fontName of fontNames) {
    const report = twinReport(await filledShapes(await renderCard(card(fontName))))
    shares.push({ fontName, share: report.share, glyphs: report.shapes })
  }
  // And an account's own font, as one is uploaded: Patrick Hand's WOFF2 (SIL OFL).
  const face = readFileSync(createRequire(import.meta.url).resolve('@fontsource/patrick-hand/files/patrick-hand-latin-400-normal.woff2'))
  const own = twinReport(await filledShapes(await renderCard(card('patrick-hand', { key: 'bench:1', face, plotterFont: 'kalam' }))))
  shares.push({ fontName: 'patrick-hand (own font)', share: own.share, glyphs: own.shapes })
  return shares
}

export function twinRow(shares: Awaited<ReturnType<typeof measureTwins>>): Row {
  const least = Math.min(...shares.map((hand) => hand.share))
  return {
    measure: `Glyphs without an affine twin, ${MESSAGE_LENGTH}-character card, per hand and an account's own font`,
    result: shares.map((hand) => `${hand.fontName} ${figure(hand.share * 100)}%`).join(', '),
    target: `≥ 90% in every hand: ${least >= 0.9 ? 'met' : 'not met'}`,
  }
}

/** Per hand, the card's pen lifts per word and its plotting time at the default feeds (0.3 s a lift). */
export function measurePlotter(): Array<{ fontName: FontName; liftsPerWord: number; seconds: number }> {
  const settings = loadConfig({}).plotter
  const words = cardMessage(MESSAGE_LENGTH).split(/\s+/).filter(Boolean).length
  return fontNames.map((fontName) => {
    const plot = plotLetter('card', card(fontName), settings.penWidth)
    const figures = plotFigures(plot.page, plot.strokes)
    return { fontName, liftsPerWord: figures.strokes / words, seconds: plotSeconds(figures, settings) }
  })
}

export function plotterRows(hands: ReturnType<typeof measurePlotter>): Row[] {
  const cursive = hands.filter((hand) => joinedHands.has(hand.fontName))
  return [
    {
      measure: `Plotter, ${MESSAGE_LENGTH}-character card: pen lifts per word, per hand`,
      result: hands.map((hand) => `${hand.fontName} ${hand.liftsPerWord.toFixed(2)}`).join(', '),
      target: `cursive ≤ 2.5: ${cursive.every((hand) => hand.liftsPerWord <= 2.5) ? 'met' : 'not met'}`,
    },
    {
      measure: `Plotter, ${MESSAGE_LENGTH}-character card: estimate at the default feeds, per hand`,
      result: hands.map((hand) => `${hand.fontName} ${Math.round(hand.seconds)} s`).join(', '),
      target: `≤ 180 s: ${hands.every((hand) => hand.seconds <= 180) ? 'met' : 'not met'}`,
    },
  ]
}
