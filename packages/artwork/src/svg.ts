import { SaxesParser, type SaxesAttributeNS, type SaxesTagNS } from 'saxes'
import sharp from 'sharp'
import { MAX_PIXELS, type SizePx } from './limits.js'
import { PNG_SIGNATURE, readPngHeader } from './png.js'
import { num, quote, refuse, RefusedError } from './refusal.js'

export const SVG_NAMESPACE = 'http://www.w3.org/2000/svg'

export interface XmlAttribute {
  /** As written, with its prefix (`xlink:href`). */
  name: string
  /** Without its prefix, lower-cased, for the checks (`href`). */
  local: string
  prefix: string
  value: string
}

export interface XmlElement {
  name: string
  /** Without its prefix, lower-cased, for the checks. */
  local: string
  uri: string
  attributes: XmlAttribute[]
  children: XmlNode[]
  line: number
}

export type XmlNode = XmlElement | { text: string }

export interface ParsedSvg {
  root: XmlElement
  /** The viewBox, when it has a usable one. */
  viewBox: { x: number; y: number; width: number; height: number } | null
  /** The size it is drawn at, in CSS pixels (96 to the inch): its width and height, or the viewBox's. */
  size: SizePx
}

/** How deep elements may nest, and how many a document may hold: far past what a design tool writes. */
const MAX_SVG_DEPTH = 256
const MAX_SVG_ELEMENTS = 100_000
/** How many <use> references a document may hold. */
const MAX_SVG_USES = 500

/** Elements that run code or pull in another document; nothing a printed card needs. */
const forbiddenElements = new Map([
  ['script', 'scripts'],
  ['foreignobject', 'contenido HTML incrustado'],
  ['iframe', 'documentos incrustados'],
  ['embed', 'objetos incrustados'],
  ['object', 'objetos incrustados'],
  ['audio', 'audio'],
  ['video', 'vídeo'],
  // SVG Tiny 1.2's event handlers: script by another name.
  ['handler', 'scripts'],
  ['listener', 'scripts'],
])
const animationElements = new Set(['animate', 'animatemotion', 'animatetransform', 'animatecolor', 'set'])
/** Attributes whose whole value is a URL. */
const referenceAttributes = new Set(['href', 'src'])

const entityNote = 'solo valen las cinco entidades predefinidas de XML (&amp; &lt; &gt; &quot; &apos;) y las referencias numéricas de carácter (&#233;)'

/**
 * Parses an SVG with saxes and refuses what could run code, read a file or reach the network
 * when it is rasterized. The checks look at the document as parsed, and what is rasterized is the
 * document re-serialized from that parse (`serializeSvg`), never the bytes as uploaded, so
 * librsvg cannot read something the checks did not see (another encoding, a DTD, a comment trick).
 */
export async function parseSvg(data: Buffer): Promise<ParsedSvg> {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data)
  } catch {
    refuse('El SVG debe estar codificado en UTF-8: contiene bytes que no son UTF-8 válido.')
  }

  const parser = new SaxesParser({ xmlns: true, position: true })
  const stack: XmlElement[] = []
  let root: XmlElement | undefined
  let styleText: string | null = null
  const embedded: Array<{ kind: 'png' | 'jpeg'; bytes: Buffer; line: number }> = []
  const at = () => `línea ${parser.line}`

  const checkReference = (value: string, where: string) => {
    const reference = value.trim()
    if (reference === '' || reference.startsWith('#')) return
    const image = /^data:image\/(png|jpeg);base64,([A-Za-z0-9+/=\s]*)$/i.exec(reference)
    if (image) {
      embedded.push({ kind: image[1]!.toLowerCase() as 'png' | 'jpeg', bytes: Buffer.from(image[2]!.replace(/\s+/g, ''), 'base64'), line: parser.line })
      return
    }
    refuse(
      `El SVG hace referencia a ${quote(reference)} (${where}, ${at()}): solo se admiten referencias dentro del propio documento (#id) e imágenes incrustadas como data:image/png;base64 o data:image/jpeg;base64. Incrusta las imágenes y quita los enlaces a archivos o direcciones externas.`,
    )
  }

  // CSS, in a style attribute, a <style> element or a presentation attribute, may load a file
  // through url(...) or @import. Escapes and comments are undone first so they cannot hide either.
  const checkCss = (css: string, where: string) => {
    const plain = unescapeCss(css.replace(/\/\*[\s\S]*?(\*\/|$)/g, ' '))
    if (/@import/i.test(plain)) refuse(`El SVG importa una hoja de estilos externa (@import en ${where}, ${at()}): incluye los estilos en el propio SVG.`)
    const functions = /\b(url|src)\(\s*/gi
    let match: RegExpExecArray | null
    while ((match = functions.exec(plain))) {
      const rest = plain.slice(match.index + match[0].length)
      const quoteChar = rest[0]
      let reference: string
      if (quoteChar === '"' || quoteChar === "'") {
        const end = rest.indexOf(quoteChar, 1)
        reference = rest.slice(1, end === -1 ? undefined : end)
      } else {
        const end = rest.indexOf(')')
        reference = rest.slice(0, end === -1 ? undefined : end)
      }
      checkReference(reference, `${match[1]!.toLowerCase()}() en ${where}`)
    }
  }

  parser.on('doctype', (doctype) => {
    if (/<!ENTITY/i.test(doctype)) refuse(`El SVG declara entidades XML (<!ENTITY> en su DOCTYPE), que no se admiten: ${entityNote}.`)
    refuse('El SVG tiene una declaración <!DOCTYPE>, que no se admite (puede cargar definiciones externas): elimínala; un SVG no la necesita.')
  })
  parser.on('processinginstruction', (instruction) => {
    if (instruction.target.toLowerCase() === 'xml-stylesheet')
      refuse(`El SVG enlaza una hoja de estilos externa (<?xml-stylesheet?>, ${at()}): incluye los estilos en el propio SVG.`)
  })
  let elements = 0
  parser.on('opentag', (tag: SaxesTagNS) => {
    // Checked while the tags are read, before any is kept: a document nested thousands deep, or
    // of a million elements, would hold the process for seconds or minutes in what comes after.
    if (stack.length >= MAX_SVG_DEPTH) refuse(`El SVG anida más de ${MAX_SVG_DEPTH} elementos unos dentro de otros (${at()}): aplana sus grupos.`)
    if (++elements > MAX_SVG_ELEMENTS) refuse(`El SVG tiene más de ${MAX_SVG_ELEMENTS.toLocaleString('es')} elementos: simplifícalo o envíalo como PNG.`)
    const element: XmlElement = {
      name: tag.name,
      local: tag.local.toLowerCase(),
      uri: tag.uri,
      attributes: Object.values(tag.attributes).map((attribute: SaxesAttributeNS) => ({
        name: attribute.name,
        local: attribute.local.toLowerCase(),
        prefix: attribute.prefix,
        value: attribute.value,
      })),
      children: [],
      line: parser.line,
    }
    checkElement(element)
    const parent = stack.at(-1)
    if (parent) parent.children.push(element)
    else root = element
    stack.push(element)
    if (element.local === 'style') styleText = ''
  })
  parser.on('closetag', () => {
    const element = stack.pop()
    if (element?.local === 'style' && styleText !== null) {
      checkCss(styleText, 'un elemento <style>')
      styleText = null
    }
  })
  const onText = (content: string) => {
    const parent = stack.at(-1)
    if (!parent) return
    parent.children.push({ text: content })
    if (styleText !== null) styleText += content
  }
  parser.on('text', onText)
  parser.on('cdata', onText)

  let uses = 0
  function checkElement(element: XmlElement) {
    const forbidden = forbiddenElements.get(element.local)
    if (forbidden) refuse(`El SVG contiene un elemento <${element.name}> (${at()}): no se admiten ${forbidden} en un SVG para imprimir. Quítalo.`)
    // Filters and references multiplied by references are what make a small SVG take librsvg
    // minutes to draw, with the upload's sharp threads busy meanwhile: a print file flattens them.
    if (element.local === 'filter' || /^fe[a-z]/.test(element.local))
      refuse(
        `El SVG usa filtros (<${element.name}>, ${at()}), que no se admiten en un SVG para imprimir: aplánalos en tu programa de diseño o envía un PNG o PDF.`,
      )
    if (element.local === 'use' && ++uses > MAX_SVG_USES)
      refuse(`El SVG reutiliza elementos con <use> más de ${MAX_SVG_USES} veces: aplánalo en tu programa de diseño o envía un PNG o PDF.`)
    for (const attribute of element.attributes) {
      // Namespace declarations name a namespace; they do not load it.
      if (attribute.prefix === 'xmlns' || attribute.name === 'xmlns') continue
      if (attribute.local.startsWith('on'))
        refuse(`El SVG tiene un atributo de evento ${attribute.name} en <${element.name}> (${at()}): no se admiten scripts ni atributos on*. Quítalo.`)
      if (referenceAttributes.has(attribute.local)) checkReference(attribute.value, `atributo ${attribute.name} de <${element.name}>`)
      else checkCss(attribute.value, `el atributo ${attribute.name} de <${element.name}>`)
    }
    if (animationElements.has(element.local)) {
      const target = element.attributes.find((attribute) => attribute.local === 'attributename')?.value.trim() ?? ''
      if (/(^|:)href$/i.test(target)) refuse(`El SVG contiene una animación <${element.name}> que cambia el enlace ${target} (${at()}): no se admite. Quítala.`)
    }
  }

  try {
    parser.write(text).close()
  } catch (error) {
    if (error instanceof RefusedError) throw error
    refuse(wellFormednessMessage(error instanceof Error ? error.message : String(error), parser.line, parser.column))
  }
  if (!root) refuse('El SVG no tiene ningún elemento: debe contener un elemento raíz <svg>.')
  if (root.local !== 'svg') refuse(`El elemento raíz del documento es <${root.name}>: un SVG debe empezar por <svg>.`)

  for (const image of embedded) await checkEmbeddedImage(image)

  const viewBox = readViewBox(attributeOf(root, 'viewBox'))
  const width = readLength(attributeOf(root, 'width'))
  const height = readLength(attributeOf(root, 'height'))
  let size: SizePx | null = null
  if (width !== null && height !== null) size = { width, height }
  else if (viewBox && width !== null) size = { width, height: (width * viewBox.height) / viewBox.width }
  else if (viewBox && height !== null) size = { width: (height * viewBox.width) / viewBox.height, height }
  else if (viewBox) size = { width: viewBox.width, height: viewBox.height }
  if (!size)
    refuse(
      'El SVG no indica su tamaño: el elemento <svg> necesita un atributo viewBox (por ejemplo viewBox="0 0 148 105") o width y height con unidades absolutas (por ejemplo width="148mm" height="105mm").',
    )
  return { root, viewBox, size }
}

/** An embedded image is decoded by librsvg when the SVG is drawn: the same pixel limit as an upload applies. */
async function checkEmbeddedImage(image: { kind: 'png' | 'jpeg'; bytes: Buffer; line: number }) {
  const where = `línea ${image.line}`
  if (image.kind === 'png') {
    if (!image.bytes.subarray(0, 8).equals(PNG_SIGNATURE)) refuse(`El SVG incrusta una imagen declarada PNG que no lo es (${where}).`)
    try {
      readPngHeader(image.bytes)
    } catch (error) {
      if (error instanceof RefusedError) refuse(`El SVG incrusta una imagen PNG no admitida (${where}): ${error.message}`)
      throw error
    }
    return
  }
  if (image.bytes[0] !== 0xff || image.bytes[1] !== 0xd8 || image.bytes[2] !== 0xff)
    refuse(`El SVG incrusta una imagen declarada JPEG que no lo es (${where}).`)
  let size: { width: number; height: number }
  try {
    // Reads the JPEG's header only.
    const metadata = await sharp(image.bytes).metadata()
    size = { width: metadata.width, height: metadata.height }
  } catch {
    refuse(`El SVG incrusta una imagen JPEG dañada (${where}).`)
  }
  if (size.width * size.height > MAX_PIXELS)
    refuse(`El SVG incrusta una imagen JPEG de ${num(size.width)} × ${num(size.height)} px (${where}): el máximo es ${num(MAX_PIXELS / 1e6)} megapíxeles.`)
}

export function attributeOf(element: XmlElement, name: string): string | undefined {
  return element.attributes.find((attribute) => attribute.name === name)?.value
}

/** A viewBox with a positive width and height, or null. */
export function readViewBox(value: string | undefined): ParsedSvg['viewBox'] {
  if (value === undefined) return null
  const parts = value
    .trim()
    .split(/[\s,]+/)
    .map(Number)
  if (parts.length !== 4 || !parts.every(Number.isFinite)) return null
  const [x, y, width, height] = parts as [number, number, number, number]
  return width > 0 && height > 0 ? { x, y, width, height } : null
}

const unitPx: Record<string, number> = { '': 1, px: 1, in: 96, cm: 96 / 2.54, mm: 96 / 25.4, pt: 96 / 72, pc: 16 }

/** An absolute length in CSS pixels, or null (absent, a percentage, `auto`, zero or nonsense). */
export function readLength(value: string | undefined): number | null {
  if (value === undefined) return null
  const match = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*(px|in|cm|mm|pt|pc)?\s*$/i.exec(value)
  if (!match) return null
  const length = Number(match[1]) * unitPx[(match[2] ?? '').toLowerCase()]!
  return Number.isFinite(length) && length > 0 ? length : null
}

function unescapeCss(css: string): string {
  return css.replace(/\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|\r\n|([\s\S]))/g, (_all, hex: string | undefined, char: string | undefined) => {
    if (hex !== undefined) {
      const code = parseInt(hex, 16)
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd'
    }
    return char === undefined || char === '\n' || char === '\r' || char === '\f' ? '' : char
  })
}

const saxesMessages: Array<[RegExp, (match: RegExpExecArray) => string]> = [
  [/unclosed tag: (.*)/, (m) => `la etiqueta <${m[1]}> no está cerrada`],
  [/unmatched closing tag: (.*?)\.?$/, (m) => `la etiqueta de cierre </${m[1]}> no corresponde a ninguna abierta`],
  [/unexpected close tag/, () => 'hay una etiqueta de cierre sin su apertura'],
  [/unbound namespace prefix: "(.*)"/, (m) => `el prefijo de espacio de nombres «${m[1]}» no está declarado (falta xmlns:${m[1]}="…")`],
  [/duplicate attribute: (.*?)\.?$/, (m) => `el atributo ${m[1]} está repetido`],
  [/text data outside of root node/, () => 'hay texto fuera del elemento raíz'],
  [/document must contain a root element/, () => 'el documento no tiene elemento raíz'],
  [/documents may contain only one root/, () => 'hay más de un elemento raíz'],
  [/unexpected end/, () => 'el documento termina antes de tiempo'],
  [/attribute without value|unquoted attribute value|value must be quoted|value required/, () => 'hay un atributo sin valor o sin comillas'],
  [/malformed character entity/, () => 'hay una referencia de carácter (&#…;) que no es válida'],
  [/disallowed character in entity name|empty entity name/, () => 'hay un «&» que no empieza una entidad: escríbelo como &amp;'],
  [/malformed comment/, () => 'hay un comentario mal formado'],
  [/disallowed character/, () => 'hay un carácter no permitido'],
  [/XML declaration|xml declaration/, () => 'la declaración <?xml …?> no es válida o no está al principio'],
]

function wellFormednessMessage(error: string, line: number, column: number): string {
  const detail = error.replace(/^\d+:\d+: /, '')
  if (/undefined entity/.test(detail)) return `El SVG usa una entidad XML no definida (línea ${line}, columna ${column}): ${entityNote}.`
  for (const [pattern, message] of saxesMessages) {
    const match = pattern.exec(detail)
    if (match) return `El SVG no es XML bien formado (línea ${line}, columna ${column}): ${message(match)}.`
  }
  return `El SVG no es XML bien formado (línea ${line}, columna ${column}): revisa la sintaxis en ese punto.`
}

function escapeAttribute(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
}

export function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/**
 * The document as it was checked, written out again: no DOCTYPE, comments or processing
 * instructions, text escaped. `rootAttributes` replaces (or adds) attributes of the root, to draw
 * it at an exact size.
 */
export function serializeSvg(root: XmlElement, rootAttributes: Record<string, string> = {}): string {
  const parts: string[] = []
  const write = (element: XmlElement, overrides: Record<string, string>) => {
    parts.push('<', element.name)
    const pending = new Map(Object.entries(overrides))
    for (const attribute of element.attributes) {
      const value = pending.has(attribute.name) ? pending.get(attribute.name)! : attribute.value
      pending.delete(attribute.name)
      parts.push(' ', attribute.name, '="', escapeAttribute(value), '"')
    }
    for (const [name, value] of pending) parts.push(' ', name, '="', escapeAttribute(value), '"')
    if (element.children.length === 0) {
      parts.push('/>')
      return
    }
    parts.push('>')
    for (const child of element.children) {
      if ('text' in child) parts.push(escapeText(child.text))
      else write(child, {})
    }
    parts.push('</', element.name, '>')
  }
  write(root, rootAttributes)
  return parts.join('')
}
