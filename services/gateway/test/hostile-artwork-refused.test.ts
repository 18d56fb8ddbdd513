// Hostile artwork uploads refused, with nothing stored: each test fails if the rule it names
// breaks. What such uploads may cost the gateway (time, memory, its event loop) is in
// artwork-costs-bounded.test.ts.
//
//   npx vitest run services/gateway/test/hostile-artwork-refused.test.ts
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { crc32, deflateSync } from 'node:zlib'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import sharp, { type Sharp } from 'sharp'
import { ARTWORK_MAX_BYTES } from '@letters/contracts'
import { artworks } from '@letters/db'
import { describeLetter, renderCard, renderEnvelope } from '@letters/render'
import { cardSvg, pdfOf, pngOf } from '@letters/test/support/artwork'
import { sampleRecipient } from '@letters/test/support/factories'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import type { AdminClient } from '@letters/test/support/gateway'
import { pdfOfObjects, probeEventLoop } from '@letters/test/support/hostile-artwork'

const it = base.extend({ gatewayOptions: { isolate: 'rt-artwork-held' } })

const upload = (admin: AdminClient, accountId: string, path: string, body: Buffer | string, type: string) =>
  admin.put(`/admin/accounts/${accountId}/${path}/artwork`, body, type)

const versionsOf = async (db: import('@letters/db').Db, ownerId: string) => db.select().from(artworks).where(eq(artworks.ownerId, ownerId))

const NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
const logo = (inner: string, attributes = 'viewBox="0 0 90 36"') => `<svg ${NS} ${attributes}>${inner}</svg>`
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

/** A letter drawn as the floor draws it, with a design carrying these print forms. */
function letterWith(design: { front?: Buffer | null; logo?: Buffer | null; signature?: unknown }) {
  return {
    ...describeLetter({
      letterId: '00000000-0000-4000-8000-00000000beef',
      code: 'RTHELD0001',
      fontName: 'caveat',
      message: 'Hola, gracias por todo.',
      senderName: 'Ana',
      recipient: { ...sampleRecipient, countryName: 'España' },
      floorCountry: 'ES',
    }),
    design: {
      card: { format: 'A6', production: 'printed', front: design.front ?? null },
      envelope: { format: 'C6', paperColor: null, logo: design.logo ?? null },
      signature: (design.signature ?? null) as never,
      returnAddressLines: null,
    },
  } as Parameters<typeof renderCard>[0]
}

describe('SVG that would read a file, reach the network or run code is refused, and nothing is stored', () => {
  const hostile: Record<string, string> = {
    xxe: `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg ${NS} viewBox="0 0 90 36"><text>&x;</text></svg>`,
    billionLaughs: `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><svg ${NS} viewBox="0 0 90 36"><text>&c;</text></svg>`,
    parameterEntity: `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]><svg ${NS} viewBox="0 0 90 36"/>`,
    stylesheetPI: `<?xml-stylesheet href="file:///etc/passwd"?>${logo('<rect width="9" height="9"/>')}`,
    imageFile: logo('<image href="file:///etc/passwd" width="9" height="9"/>'),
    imageOtherPrefix: logo('<image xmlns:q="http://www.w3.org/1999/xlink" q:href="file:///etc/hostname" width="9" height="9"/>'),
    cssEscapedUrl: logo('<rect width="9" height="9" style="fill:u\\72l(file:///etc/passwd)"/>'),
    cssEntityUrl: logo('<rect width="9" height="9" style="fill:&#x75;rl(file:///etc/passwd)"/>'),
    cssCommentInsideUrl: logo('<rect width="9" height="9" style="fill:url(/**/file:///etc/passwd)"/>'),
    cssImportEscaped: logo('<style>@im\\port "file:///etc/x.css";</style><rect width="9" height="9"/>'),
    cssCdataUrl: logo('<style><![CDATA[rect{fill:url("http://127.0.0.1:9/x")}]]></style><rect width="9" height="9"/>'),
    presentationUrl: logo('<rect width="9" height="9" fill="url(http://127.0.0.1:9/x#p)"/>'),
    dataSvg: logo('<image href="data:image/svg+xml;base64,PHN2Zy8+" width="9" height="9"/>'),
    dataJpegThatIsPng: logo(`<image href="data:image/jpeg;base64,${PNG_1PX}" width="9" height="9"/>`),
    dataPngThatIsText: logo(`<image href="data:image/png;base64,${Buffer.from('<svg/>').toString('base64')}" width="9" height="9"/>`),
    javascriptLink: logo('<a href="javascript:alert(1)"><rect width="9" height="9"/></a>'),
    script: logo('<script>alert(1)</script>'),
    eventAttribute: logo('<rect width="9" height="9" onload="alert(1)"/>'),
    foreignObject: logo('<foreignObject width="9" height="9"><iframe xmlns="http://www.w3.org/1999/xhtml" src="file:///etc/passwd"/></foreignObject>'),
    animatedHref: logo('<a href="#x"><set attributeName="href" to="file:///etc/passwd"/><rect width="9" height="9"/></a>'),
    animatedUrl: logo('<rect width="9" height="9"><animate attributeName="fill" values="url(file:///etc/passwd)"/></rect>'),
    xinclude: logo('<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd" parse="text"/>'),
    utf16: '\ufeff<svg/>',
  }
  it('refuses each with a 400 (or 415), quickly', async ({ gateway, admin, account }) => {
    const answers: Record<string, string> = {}
    for (const [name, svg] of Object.entries(hostile)) {
      const body = name === 'utf16' ? Buffer.from(svg, 'utf16le') : svg
      const probe = await probeEventLoop(() => upload(admin, account.id, `envelope-designs/${account.envelopeDesignId}`, body, 'image/svg+xml'))
      answers[name] = `${probe.result.statusCode} in ${probe.ms} ms`
      expect([400, 415], `${name}: ${probe.result.body}`).toContain(probe.result.statusCode)
      expect(probe.ms, name).toBeLessThan(2000)
    }
    console.log(`### hostile SVG logos: ${JSON.stringify(answers)}`)
    expect(await versionsOf(gateway.db, account.envelopeDesignId)).toEqual([])
  })

  it('draws <use> loops and huge sizes quickly, and keeps the upload’s text out of every print form', async ({ gateway, admin, account }) => {
    const drawn = {
      useLoop: logo('<g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g><use href="#a"/>'),
      useSelf: logo('<use id="a" href="#a"/>'),
      hugeWidth: logo('<rect width="90" height="36"/>', 'width="100000000" height="40000000" viewBox="0 0 90 36"'),
      hugeViewBox: logo('<rect width="1e38" height="1e38"/>', 'viewBox="0 0 1e38 4e37"'),
      dashes: logo('<path d="M0 0 L90 36" stroke="#000" stroke-dasharray="0.000001"/>'),
    }
    for (const [name, svg] of Object.entries(drawn)) {
      const started = Date.now()
      const answer = await upload(admin, account.id, `envelope-designs/${account.envelopeDesignId}`, svg, 'image/svg+xml')
      expect([200, 400], `${name}: ${answer.body}`).toContain(answer.statusCode)
      expect(Date.now() - started, name).toBeLessThan(5000)
    }
    // A card front and a logo carrying markers in every place text can hide: none reaches a print form or a printed page.
    const marked = cardSvg('A6', {
      extra: '<desc>RT-MARKER-DESC</desc><metadata>RT-MARKER-META</metadata><!-- RT-MARKER-COMMENT --><title>RT-MARKER-TITLE</title>',
    })
    expect((await upload(admin, account.id, `card-designs/${account.cardDesignId}`, marked, 'image/svg+xml')).statusCode).toBe(200)
    const textChunk = (keyword: string, text: string) => {
      const data = Buffer.from(`${keyword}\0${text}`, 'latin1')
      const chunk = Buffer.alloc(12 + data.length)
      chunk.writeUInt32BE(data.length, 0)
      chunk.write('tEXt', 4, 'latin1')
      data.copy(chunk, 8)
      chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length)
      return chunk
    }
    const png = await pngOf(600, 240, { alpha: true })
    const markedPng = Buffer.concat([png.subarray(0, 33), textChunk('Comment', 'RT-MARKER-PNG'), png.subarray(33)])
    expect((await upload(admin, account.id, `envelope-designs/${account.envelopeDesignId}`, markedPng, 'image/png')).statusCode).toBe(200)
    const [front] = await versionsOf(gateway.db, account.cardDesignId)
    const logos = await versionsOf(gateway.db, account.envelopeDesignId)
    const logoPrint = logos.sort((a, b) => b.version - a.version)[0]!.print
    const files = [
      front!.print,
      front!.preview,
      logoPrint,
      await renderCard(letterWith({ front: front!.print })),
      await renderEnvelope(letterWith({ logo: logoPrint })),
    ]
    for (const file of files) expect(file.toString('latin1')).not.toContain('RT-MARKER')
  })
})

describe('wrong types, polyglots and sizes', () => {
  it('refuses bytes that are not what their Content-Type says, storing nothing', async ({ gateway, admin, account }) => {
    const png = await pngOf(1800, 1280)
    const pdf = await pdfOf(154, 111)
    const cases: Array<[string, Buffer | string, string]> = [
      ['png as svg', png, 'image/svg+xml'],
      ['svg as pdf', cardSvg('A6'), 'application/pdf'],
      ['pdf as png', pdf, 'image/png'],
      ['junk before %PDF-', Buffer.concat([Buffer.from('GIF89a junk\n'), pdf]), 'application/pdf'],
      ['gif', Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), 'image/png'],
      [
        'jpeg',
        await sharp({ create: { width: 10, height: 10, channels: 3, background: '#fff' } })
          .jpeg()
          .toBuffer(),
        'image/png',
      ],
      ['png+zip polyglot as svg', Buffer.concat([png, Buffer.from('PK\x03\x04<svg/>', 'latin1')]), 'image/svg+xml'],
      ['svg as text/xml', cardSvg('A6'), 'text/xml'],
      ['svg as image/svg', cardSvg('A6'), 'image/svg'],
      ['empty', Buffer.alloc(0), 'image/png'],
      ['pdf signature', pdf, 'application/pdf'],
    ]
    const answers: string[] = []
    for (const [name, body, type] of cases) {
      const path = name === 'pdf signature' ? `signatures/${account.signatureId}` : `card-designs/${account.cardDesignId}`
      const answer = await upload(admin, account.id, path, body, type)
      answers.push(`${name}: ${answer.statusCode}`)
      expect([400, 415], `${name}: ${answer.body}`).toContain(answer.statusCode)
    }
    console.log(`### wrong types: ${answers.join(', ')}`)
    expect(await versionsOf(gateway.db, account.cardDesignId)).toEqual([])
    expect(await versionsOf(gateway.db, account.signatureId)).toEqual([])
  })

  it('answers 413 to a body one byte over 20 MB, also sent chunked without Content-Length, and reads one of exactly 20 MB', async ({ gateway, account }) => {
    const padded = (bytes: number) => {
      const head = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 154 111"><rect width="154" height="111" fill="#234"/><!--'
      const tail = '--></svg>'
      return Buffer.concat([Buffer.from(head), Buffer.alloc(bytes - head.length - tail.length, 0x78), Buffer.from(tail)])
    }
    await gateway.listen({ host: '127.0.0.1', port: 0 })
    const { port } = gateway.server.address() as AddressInfo
    const url = `http://127.0.0.1:${port}/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'image/svg+xml' }
    /** PUTs `body` (chunked: in 1 MB writes, no Content-Length); the status, even when the server answers before it has read everything. */
    const timed = (body: Buffer, chunked: boolean) =>
      new Promise<{ status: number; ms: number }>((resolve, reject) => {
        const started = Date.now()
        setTimeout(() => {
          request.destroy()
          resolve({ status: -1, ms: Date.now() - started })
        }, 25_000).unref()
        const request = httpRequest(url, { method: 'PUT', headers: chunked ? headers : { ...headers, 'content-length': String(body.length) } }, (response) => {
          response.resume()
          response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: Date.now() - started }))
        })
        // The server may close the socket once it has answered 413, and a reset may then beat its
        // answer to the client: a connection closed at once is a refusal too (status 0), never a hang.
        request.on('error', (error: NodeJS.ErrnoException) =>
          error.code === 'EPIPE' || error.code === 'ECONNRESET' ? setTimeout(() => resolve({ status: 0, ms: Date.now() - started }), 300) : reject(error),
        )
        void (async () => {
          for (let at = 0; at < body.length; at += 1 << 20) {
            if (request.destroyed) return
            if (!request.write(body.subarray(at, at + (1 << 20)))) await new Promise((ok) => request.once('drain', ok).once('close', ok))
          }
          request.end()
        })()
      })
    const over = await timed(padded(ARTWORK_MAX_BYTES + 1), false)
    const overChunked = await timed(padded(ARTWORK_MAX_BYTES + 1), true)
    const farOverChunked = await timed(padded(ARTWORK_MAX_BYTES * 3), true)
    const exact = await timed(padded(ARTWORK_MAX_BYTES), false)
    const under = await timed(padded(ARTWORK_MAX_BYTES - 1), true)
    console.log(
      `### sizes: 20 MB+1 ${JSON.stringify(over)}, chunked ${JSON.stringify(overChunked)}, 60 MB chunked ${JSON.stringify(farOverChunked)}, exactly 20 MB ${JSON.stringify(exact)}, 20 MB−1 chunked ${JSON.stringify(under)}`,
    )
    for (const refused of [over, overChunked, farOverChunked]) {
      expect([413, 0]).toContain(refused.status)
      expect(refused.ms).toBeLessThan(5000)
    }
    expect([over, overChunked, farOverChunked].some((refused) => refused.status === 413)).toBe(true)
    expect(exact.status).toBe(200)
    expect(under.status).toBe(200)
  }, 120_000)
})

describe('PNGs the renderer could not read never become print forms; PNG and PDF bombs are refused by their headers', () => {
  it('turns 16-bit, interlaced, grey and palette PNGs into print forms the floor’s renderer draws', async ({ gateway, admin, account }) => {
    const variants: Record<string, (image: Sharp) => Sharp> = {
      '16-bit': (image) => image.toColourspace('rgb16').png(),
      interlaced: (image) => image.png({ progressive: true }),
      '16-bit interlaced': (image) => image.toColourspace('rgb16').png({ progressive: true }),
      palette: (image) => image.png({ palette: true }),
      'grey+alpha 16-bit': (image) => image.toColourspace('grey16').png(),
    }
    const ink = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="600" height="240"><path d="M20 200 C 200 20, 300 20, 580 200" stroke="#123" stroke-width="8" fill="none"/></svg>',
    )
    for (const [name, encode] of Object.entries(variants)) {
      const png = await encode(
        sharp(
          await sharp(await pngOf(600, 240, { alpha: true }))
            .composite([{ input: ink }])
            .png()
            .toBuffer(),
        ),
      ).toBuffer()
      for (const path of [`envelope-designs/${account.envelopeDesignId}`, `signatures/${account.signatureId}`]) {
        const answer = await upload(admin, account.id, path, png, 'image/png')
        expect(answer.statusCode, `${name} ${path}: ${answer.body}`).toBe(200)
      }
    }
    const logos = await versionsOf(gateway.db, account.envelopeDesignId)
    const signatures = await versionsOf(gateway.db, account.signatureId)
    for (const logoRow of logos) await renderEnvelope(letterWith({ logo: logoRow.print }))
    for (const signature of signatures) await renderCard(letterWith({ signature: { ...(signature.drawing as object), png: signature.print } }))
    expect(logos.length + signatures.length).toBe(10)
  })

  it('refuses PNGs whose header claims too many pixels, and bounds those whose data outgrows the header', async ({ gateway, admin, account }) => {
    const header = (width: number, height: number, bitDepth = 8, colourType = 6) => {
      const ihdr = Buffer.alloc(25)
      ihdr.writeUInt32BE(13, 0)
      ihdr.write('IHDR', 4, 'latin1')
      ihdr.writeUInt32BE(width, 8)
      ihdr.writeUInt32BE(height, 12)
      ihdr[16] = bitDepth
      ihdr[17] = colourType
      ihdr.writeUInt32BE(crc32(ihdr.subarray(4, 21)), 21)
      return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr])
    }
    const idat = (data: Buffer) => {
      const chunk = Buffer.alloc(12 + data.length)
      chunk.writeUInt32BE(data.length, 0)
      chunk.write('IDAT', 4, 'latin1')
      data.copy(chunk, 8)
      chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length)
      return chunk
    }
    const iend = Buffer.from([0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82])
    // 100,000 × 100,000 in the header, 40 bytes of data; 600 × 240 in the header and 1 GB of zeros inflated behind it.
    const claimsHuge = Buffer.concat([header(100_000, 100_000), idat(deflateSync(Buffer.alloc(10))), iend])
    const lyingSmall = Buffer.concat([header(600, 240), idat(deflateSync(Buffer.alloc(1 << 30), { level: 9 })), iend])
    const results: string[] = []
    for (const [name, png] of [
      ['claims 10 gigapixels', claimsHuge],
      ['small header, 1 GB inflated', lyingSmall],
    ] as const) {
      const probe = await probeEventLoop(() => upload(admin, account.id, `signatures/${account.signatureId}`, png, 'image/png'))
      results.push(`${name} (${png.length} bytes): ${probe.result.statusCode} in ${probe.ms} ms, stall ${probe.stallMs} ms`)
      // The first is refused by its header; the second is decoded only as far as its header says
      // (its 1 GB is never inflated), and refused as a signature with no visible pixel.
      expect(probe.result.statusCode, probe.result.body).toBe(400)
      expect(probe.ms).toBeLessThan(5000)
      expect(probe.stallMs).toBeLessThan(1000)
    }
    console.log(`### PNG bombs: ${results.join('; ')}`)
    expect(await versionsOf(gateway.db, account.signatureId)).toHaveLength(0)
  }, 60_000)

  it('reads PDFs of 10,000 pages, 14,400-inch pages, deep nesting and page-tree loops quickly', async ({ admin, account }) => {
    const MM = 72 / 25.4
    const box = `[0 0 ${(154 * MM).toFixed(2)} ${(111 * MM).toFixed(2)}]`
    const kids = Array.from({ length: 10_000 }, (_, i) => `${i + 3} 0 R`).join(' ')
    const cases: Record<string, [Buffer, string]> = {
      '10,000 pages': [
        pdfOfObjects([
          '<< /Type /Catalog /Pages 2 0 R >>',
          `<< /Type /Pages /Kids [${kids}] /Count 10000 >>`,
          ...Array.from({ length: 10_000 }, () => `<< /Type /Page /Parent 2 0 R /MediaBox ${box} >>`),
        ]),
        'card-designs',
      ],
      '14,400-inch page as a logo': [
        pdfOfObjects([
          '<< /Type /Catalog /Pages 2 0 R >>',
          '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
          '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 1036800 1036800] >>',
        ]),
        'envelope-designs',
      ],
      '100,000 nested arrays': [
        pdfOfObjects([
          '<< /Type /Catalog /Pages 2 0 R >>',
          '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
          `<< /Type /Page /Parent 2 0 R /MediaBox ${box} /X ${'['.repeat(100_000)}${']'.repeat(100_000)} >>`,
        ]),
        'card-designs',
      ],
      'page tree loop': [
        pdfOfObjects([
          '<< /Type /Catalog /Pages 2 0 R >>',
          '<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1 >>',
          `<< /Type /Page /Parent 2 0 R /MediaBox ${box} >>`,
        ]),
        'card-designs',
      ],
    }
    const results: string[] = []
    for (const [name, [pdf, kind]] of Object.entries(cases)) {
      const id = kind === 'card-designs' ? account.cardDesignId : account.envelopeDesignId
      const probe = await probeEventLoop(() => upload(admin, account.id, `${kind}/${id}`, pdf, 'application/pdf'))
      results.push(`${name} (${pdf.length} bytes): ${probe.result.statusCode} in ${probe.ms} ms, stall ${probe.stallMs} ms`)
      expect([200, 400], `${name}: ${probe.result.body}`).toContain(probe.result.statusCode)
      expect(probe.ms, name).toBeLessThan(5000)
      expect(probe.stallMs, name).toBeLessThan(1500)
    }
    console.log(`### PDFs: ${results.join('; ')}`)
  }, 60_000)
})

describe('a signature of many path segments is refused at upload, quickly (PRINTER=spool)', () => {
  // Drawn, 200,000 segments took the card PDF 0.7 s, but the plotter minutes: refused at upload.
  it('refuses a 200,000-segment signature in under 5 s, storing nothing', async ({ gateway, admin, account }) => {
    const segments: string[] = []
    for (let n = 0; n < 200_000; n++) segments.push(`L${((n * 120) / 200_000).toFixed(4)} ${(20 + 10 * Math.sin(n / 50)).toFixed(3)}`)
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><path d="M0 20 ${segments.join(' ')}"/></svg>`
    const started = Date.now()
    const answer = await upload(admin, account.id, `signatures/${account.signatureId}`, svg, 'image/svg+xml')
    expect(answer.statusCode, answer.body).toBe(400)
    expect(answer.json<{ message: string }>().message).toMatch(/tramos/)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await versionsOf(gateway.db, account.signatureId)).toHaveLength(0)
  }, 60_000)
})
