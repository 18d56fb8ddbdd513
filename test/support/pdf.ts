import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs'

/** What a PDF reader finds in a file: its page count and its text without white space (glyphs are placed one by one). */
export async function pdfText(pdf: Buffer | Uint8Array): Promise<{ pages: number; text: string }> {
  const document = await getDocument({ data: new Uint8Array(pdf), useSystemFonts: false, isEvalSupported: false }).promise
  let text = ''
  for (let page = 1; page <= document.numPages; page++) {
    const content = await (await document.getPage(page)).getTextContent()
    text += content.items.map((item) => ('str' in item ? item.str : '')).join('')
  }
  return { pages: document.numPages, text: text.replace(/\s+/g, '') }
}

/** Text as pdfText gives it back. */
export const compact = (text: string) => text.replace(/\s+/g, '')

/** Where every piece of text of a PDF is drawn, page by page, in points from the page's bottom left. */
export async function pdfTextBoxes(
  pdf: Buffer | Uint8Array,
): Promise<Array<{ width: number; height: number; boxes: Array<{ text: string; x: number; y: number; width: number }> }>> {
  const document = await getDocument({ data: new Uint8Array(pdf), useSystemFonts: false, isEvalSupported: false }).promise
  const pages = []
  for (let number = 1; number <= document.numPages; number++) {
    const page = await document.getPage(number)
    const [, , width, height] = page.view as [number, number, number, number]
    const { items } = await page.getTextContent()
    const boxes = items.flatMap((item) =>
      'str' in item && item.str.trim() ? [{ text: item.str, x: item.transform[4] as number, y: item.transform[5] as number, width: item.width }] : [],
    )
    pages.push({ width, height, boxes })
  }
  return pages
}
