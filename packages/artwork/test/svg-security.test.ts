import sharp from 'sharp'
import { describe, expect, test } from 'vitest'
import { cardFront, envelopeLogo, expectAccepted, expectRefusal, headerOnlyPng, pngOf, signature, svgDoc } from './fixtures.js'

const sky = '<rect width="148" height="105" fill="#4a90d9"/>'

describe('SVG: what could run code, read a file or reach the network is refused', () => {
  test('<script>', async () => {
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`${sky}<script>alert(1)</script>`)), 400, '<script>', 'scripts', 'línea 1')
  })

  test('an on* event attribute', async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 148 105" onload="alert(1)">${sky}</svg>`
    expectRefusal(await cardFront('image/svg+xml', svg), 400, 'onload', 'on*')
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`<rect width="10" height="10" onClick="x()"/>`)), 400, 'onClick')
  })

  test('<foreignObject>', async () => {
    const svg = svgDoc(`${sky}<foreignObject width="100" height="50"><div xmlns="http://www.w3.org/1999/xhtml">hola</div></foreignObject>`)
    expectRefusal(await cardFront('image/svg+xml', svg), 400, '<foreignObject>', 'HTML')
  })

  test('a DOCTYPE declaring an external entity (XXE), and any other DOCTYPE', async () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${svgDoc(`<text>&xxe;</text>`)}`
    expectRefusal(await cardFront('image/svg+xml', xxe), 400, 'entidades', '<!ENTITY>')
    const laughs = `<!DOCTYPE svg [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]>${svgDoc('<text>&b;</text>')}`
    expectRefusal(await cardFront('image/svg+xml', laughs), 400, 'entidades')
    const illustrator = `<?xml version="1.0" encoding="utf-8"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">${svgDoc(sky)}`
    expectRefusal(await cardFront('image/svg+xml', illustrator), 400, '<!DOCTYPE>', 'elimínala')
  })

  test('an entity other than the five of XML', async () => {
    expectRefusal(await cardFront('image/svg+xml', svgDoc('<text>a&nbsp;b</text>')), 400, 'entidad XML no definida', '&amp;', 'línea 1')
    expectAccepted(await cardFront('image/svg+xml', svgDoc(`${sky}<text>&lt;&amp;&gt;&quot;&apos;&#233;&#x41;</text>`)))
  })

  test('an external href: https, file, data:text/html, in <image>, <use> and <a>', async () => {
    const cases: Array<[string, string]> = [
      ['<image href="https://evil.example/x.png" width="10" height="10"/>', 'https://evil.example/x.png'],
      ['<image href="file:///etc/passwd" width="10" height="10"/>', 'file:///etc/passwd'],
      ['<image xlink:href="http://evil.example/x.png" width="10" height="10"/>', 'http://evil.example/x.png'],
      ['<image href="x.png" width="10" height="10"/>', '«x.png»'],
      ['<use href="https://evil.example/sprite.svg#a"/>', 'sprite.svg#a'],
      ['<use xlink:href="/etc/passwd#a"/>', '/etc/passwd#a'],
      ['<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;"><rect width="5" height="5"/></a>', 'data:text/html'],
      ['<image href="data:image/svg+xml;base64,PHN2Zy8+" width="10" height="10"/>', 'data:image/svg+xml'],
      ['<a href="javascript:alert(1)"><rect width="5" height="5"/></a>', 'javascript:'],
      ['<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd" parse="text"/>', 'file:///etc/passwd'],
    ]
    for (const [element, reference] of cases) {
      const refusal = expectRefusal(
        await cardFront('image/svg+xml', svgDoc(`${sky}${element}`)),
        400,
        reference,
        'solo se admiten referencias dentro del propio documento (#id)',
      )
      expect(refusal.message).toContain('data:image/png;base64')
    }
    // A filter's image is refused with the filter, before its reference is read.
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`${sky}<feImage href="https://evil.example/x.png"/>`)), 400, 'filtros', '<feImage>')
  })

  test('url() in a style attribute, a presentation attribute and a <style>, even escaped', async () => {
    expectRefusal(
      await cardFront('image/svg+xml', svgDoc(`<rect width="148" height="105" style="fill: url(https://evil.example/p.svg#g)"/>`)),
      400,
      'https://evil.example/p.svg#g',
      'style',
    )
    expectRefusal(
      await cardFront('image/svg+xml', svgDoc(`<rect width="148" height="105" fill="url('file:///etc/passwd')"/>`)),
      400,
      'file:///etc/passwd',
      'fill',
    )
    expectRefusal(
      await cardFront('image/svg+xml', svgDoc(`<style>rect { fill: url("http://evil.example/a#b") }</style>${sky}`)),
      400,
      'http://evil.example/a#b',
      '<style>',
    )
    expectRefusal(
      await cardFront('image/svg+xml', svgDoc(`<style><![CDATA[ rect { fill: u\\72l(http://evil.example/c) } ]]></style>${sky}`)),
      400,
      'http://evil.example/c',
    )
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`<style>rect { fill: URL( "x.svg#a" ) }</style>${sky}`)), 400, '«x.svg#a»')
  })

  test('@import, and an xml-stylesheet processing instruction', async () => {
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`<style>@import url(https://evil.example/s.css);</style>${sky}`)), 400, '@import')
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`<style>@\\69mport "s.css";</style>${sky}`)), 400, '@import')
    expectRefusal(await cardFront('image/svg+xml', `<?xml-stylesheet href="https://evil.example/s.css"?>${svgDoc(sky)}`), 400, 'xml-stylesheet')
  })

  test('<iframe>, <embed>, <object>, <audio>, <video>', async () => {
    for (const name of ['iframe', 'embed', 'object', 'audio', 'video']) {
      expectRefusal(await cardFront('image/svg+xml', svgDoc(`${sky}<${name}/>`)), 400, `<${name}>`)
    }
    // Another namespace does not make a script harmless to us.
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`${sky}<h:script xmlns:h="http://www.w3.org/1999/xhtml">x</h:script>`)), 400, '<h:script>')
  })

  test('an animation that changes a link', async () => {
    expectRefusal(
      await cardFront('image/svg+xml', svgDoc(`<a href="#x"><set attributeName="href" to="https://evil.example"/></a>${sky}`)),
      400,
      '<set>',
      'href',
    )
    expectRefusal(
      await cardFront(
        'image/svg+xml',
        svgDoc(`<image width="5" height="5"><animate attributeName="xlink:href" values="https://evil.example/a.png"/></image>${sky}`),
      ),
      400,
      '<animate>',
    )
    // An animation of something else is not refused for that.
    expectAccepted(await cardFront('image/svg+xml', svgDoc(`${sky}<circle r="5"><animate attributeName="r" from="5" to="10" dur="1s"/></circle>`)))
  })

  test('in-document references and embedded PNG and JPEG images are accepted', async () => {
    const png = (await pngOf(4, 4)).toString('base64')
    const jpeg = (
      await sharp({ create: { width: 4, height: 4, channels: 3, background: '#0f0' } })
        .jpeg()
        .toBuffer()
    ).toString('base64')
    const svg = svgDoc(
      `<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/><stop offset="1" stop-color="#00f"/></linearGradient><rect id="r" width="10" height="10"/></defs>` +
        `<rect width="148" height="105" fill="url(#g)" style="stroke: url('#g')"/><use href="#r" x="20"/><use xlink:href="#r" x="40"/>` +
        `<image x="60" width="20" height="20" href="data:image/png;base64,${png}"/><image x="90" width="20" height="20" xlink:href="data:image/jpeg;base64,${jpeg}"/>` +
        `<style>rect { stroke: url(#g) }</style>`,
    )
    expectAccepted(await cardFront('image/svg+xml', svg))
  })

  test('an embedded image over the pixel limit, or that is not what it says', async () => {
    const bomb = headerOnlyPng(10000, 10000).toString('base64')
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`${sky}<image width="10" height="10" href="data:image/png;base64,${bomb}"/>`)), 400, 'megapíxeles')
    const fake = Buffer.from('not a png at all').toString('base64')
    expectRefusal(await cardFront('image/svg+xml', svgDoc(`${sky}<image width="10" height="10" href="data:image/png;base64,${fake}"/>`)), 400, 'no lo es')
  })

  test('the same rules for logos and signatures', async () => {
    expectRefusal(await envelopeLogo('image/svg+xml', svgDoc('<script>1</script>')), 400, '<script>')
    expectRefusal(await signature('image/svg+xml', svgDoc('<path d="M0 0L10 10" onmouseover="x()"/>')), 400, 'onmouseover')
    expectRefusal(await signature('image/svg+xml', svgDoc('<path d="M0 0L10 10" style="stroke:url(https://evil.example/x)"/>')), 400, 'https://evil.example/x')
  })
})

describe('SVG: what is not a usable SVG is refused', () => {
  test('XML that is not well-formed, with the position', async () => {
    expectRefusal(
      await cardFront('image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 148 105">\n  <rect width="1">\n</svg>'),
      400,
      'no es XML bien formado',
      /línea 3, columna \d+/,
    )
    expectRefusal(await cardFront('image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 148 105"><g></svg>'), 400, 'no es XML bien formado')
    expectRefusal(await cardFront('image/svg+xml', '<svg viewBox="0 0 148 105"><x:rect/></svg>'), 400, 'prefijo', '«x»')
    expectRefusal(await cardFront('image/svg+xml', '<svg viewBox="0 0 148 105" width="1" width="2"/>'), 400, 'width está repetido')
  })

  test('bytes that are not UTF-8', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><svg viewBox="0 0 148 105"><text>'),
      Buffer.from([0xe9]),
      Buffer.from('</text></svg>'),
    ])
    expectRefusal(await cardFront('image/svg+xml', latin1), 400, 'UTF-8')
  })

  test('a root other than <svg>', async () => {
    expectRefusal(await cardFront('image/svg+xml', '<html><body/></html>'), 400, 'raíz', '<html>', '<svg>')
  })

  test('an SVG without a size', async () => {
    expectRefusal(
      await cardFront('image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10"/></svg>'),
      400,
      'viewBox',
      'width',
      'height',
    )
    expectRefusal(
      await cardFront('image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="100%" viewBox="0 0 0 10"/>'),
      400,
      'no indica su tamaño',
    )
  })
})
