import { inflateSync } from 'node:zlib'
import { PDFDict, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib'
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

/**
 * The content streams of a document, page by page (pdfkit writes one per page), each form it draws
 * (`/Name Do` of a form XObject: the writing of drawing 6 on) written out where it is drawn, as a
 * reader runs it.
 */
export async function pageContents(pdf: Buffer): Promise<string[]> {
  const document = await PDFDocument.load(pdf)
  return document.getPages().map((page) => {
    const content = inflateSync((page.node.Contents() as PDFRawStream).getContents()).toString('latin1')
    const xobjects = page.node.Resources()?.lookupMaybe(PDFName.of('XObject'), PDFDict)
    return content.replace(/\/(\w+) Do/g, (call, name: string) => {
      const form = xobjects?.lookup(PDFName.of(name))
      if (!(form instanceof PDFRawStream) || form.dict.get(PDFName.of('Subtype'))?.toString() !== '/Form') return call
      return inflateSync(form.getContents()).toString('latin1')
    })
  })
}
