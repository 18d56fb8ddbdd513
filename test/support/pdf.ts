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
