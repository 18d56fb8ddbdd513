import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '@letters/config'
import { fontNames } from '@letters/contracts'
import {
  addressLines,
  plotterFiles,
  renderCard,
  renderCardSheets,
  renderEnvelope,
  renderEnvelopes,
  renderPlotterProof,
  renderProof,
  type LetterToRender,
} from '../src/index.js'

/**
 * Letters accepted before designs had a product carry no `design`: their files must stay the
 * bytes they were drawn as, whatever the drawing learns for new letters (a reprint of an old
 * letter is its proof, byte for byte). The hashes were taken from the drawing before designs
 * existed; they change only with pdfkit, fontkit, hersheytext or a font package, and then every
 * kept proof is drawn again anyway.
 */
const letter: LetterToRender = {
  letterId: '6d1f0c2a-7b3e-4f5a-8c9d-0e1f2a3b4c5d',
  code: 'PIN0LEGACY',
  drawing: 4,
  fontName: 'caveat',
  message:
    'Querida Lucía: ¡muchas gracias por venir a la inauguración! ¿Te acuerdas de la mesa de papel japonés? Ya tenemos los sobres a juego, en azul y en verde. ' +
    'Un abrazo muy fuerte para Marta y los niños; esperamos veros pronto por Sevilla, quizá en primavera, cuando los naranjos están en flor y las tardes son largas.\n\nAna',
  signature: 'Ana, de Papelería Luna',
  // Door and staircase letters, and a long block that wraps and shrinks.
  recipientLines: [
    ...addressLines({
      name: 'María Dolores',
      surname: 'Fernández de Córdoba y Álvarez de Toledo',
      company: 'Distribuciones y Representaciones Comerciales del Sur S.L.',
      address: 'Avenida de la Constitución de mil ochocientos doce 125, Esc. B, 4º E',
      zip: '41004',
      city: 'Sevilla',
      province: 'Sevilla',
      countryName: 'España',
    }),
  ],
  senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
}

/** Today's wrapping puts this recipient's door letter (E) alone on a line, in caveat: new letters keep it with 4º, this one must not move. */
const doorLetter: LetterToRender = {
  letterId: '6d1f0c2a-7b3e-4f5a-8c9d-0e1f2a3b4c5e',
  code: 'PIN0LEGDOR',
  drawing: 4,
  fontName: 'caveat',
  message: 'Gracias por todo.',
  signature: 'Ana',
  recipientLines: ['Lucía García Muñoz', 'Calle del General Díaz Porlier 106, 4º E', '28012 Madrid'],
  senderLines: ['Ana'],
}

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex')
const settings = loadConfig({}).plotter

async function legacyHashes(): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {}
  for (const fontName of fontNames) {
    const drawn = { ...letter, fontName }
    hashes[`${fontName} card`] = sha(await renderCard(drawn))
    hashes[`${fontName} envelope`] = sha(await renderEnvelope(drawn))
    hashes[`${fontName} proof`] = sha(await renderProof(drawn))
    hashes[`${fontName} plotter proof`] = sha(await renderPlotterProof(drawn, settings.penWidth))
    for (const [name, data] of Object.entries(plotterFiles(drawn, settings))) hashes[`${fontName} ${name}`] = sha(data)
  }
  const batch = fontNames.map((fontName, index) => ({ ...letter, fontName, letterId: `${letter.letterId.slice(0, -1)}${index}`, code: `PIN0LEGAC${index}` }))
  hashes['card sheets'] = sha(await renderCardSheets(batch))
  hashes['envelopes'] = sha(await renderEnvelopes(batch))
  hashes['door envelope'] = sha(await renderEnvelope(doorLetter))
  hashes['door proof'] = sha(await renderProof(doorLetter))
  hashes['door plotter proof'] = sha(await renderPlotterProof(doorLetter, settings.penWidth))
  const doorFiles = plotterFiles(doorLetter, settings)
  hashes['door envelope.svg'] = sha(doorFiles['envelope.svg'])
  hashes['door envelope.gcode'] = sha(doorFiles['envelope.gcode'])
  return hashes
}

/**
 * A letter accepted in drawing 5 (each glyph its own shape, written out as text and deflated by
 * zlib) keeps those bytes after drawing 6 changed how new letters are shaped and written. The
 * hashes were taken from the code drawing 5 was released with.
 */
const drawnIn5: LetterToRender = {
  letterId: '6d1f0c2a-7b3e-4f5a-8c9d-0e1f2a3b4c60',
  code: 'PIN0DRAW05',
  drawing: 5,
  ink: 'green',
  fontName: 'caveat',
  message:
    'Querida Lucía: ¡muchas gracias por venir a la inauguración! ¿Te acuerdas de la mesa de papel japonés? Ya tenemos los sobres a juego, en azul y en verde.\n\nAna',
  signature: 'Ana, de Papelería Luna',
  recipientLines: addressLines({
    name: 'Lucía',
    surname: 'García Muñoz',
    company: null,
    address: 'Calle del General Díaz Porlier 106, 4º E',
    zip: '28012',
    city: 'Madrid',
    province: 'Madrid',
    countryName: 'España',
  }),
  senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
}

describe('a letter of drawing 5', () => {
  it('is drawn byte for byte as drawing 5 drew it, in every hand: card and envelope', async () => {
    const hashes: Record<string, string> = {}
    for (const fontName of fontNames) {
      hashes[`${fontName} card`] = sha(await renderCard({ ...drawnIn5, fontName }))
      hashes[`${fontName} envelope`] = sha(await renderEnvelope({ ...drawnIn5, fontName }))
    }
    expect(hashes).toEqual(PINNED_5)
  })
})

const PINNED_5: Record<string, string> = {
  'caveat card': '567bd6a8c6de108530adf080d91f21c4fc9c3720196071ef01d83550709cdc87',
  'caveat envelope': 'b81f8c605acc403d519680cc7200cedeaec5e04cfbd039faaf74c7b1f9eaf2b7',
  'dancing-script card': '4232258f8b656c65dc717deb08cb820d86894d3877a3cc863ab5d6cd3d10d388',
  'dancing-script envelope': 'a3383a984557786eb0c823c8b39612fce38fdf97020ef984825fcfdb7c253931',
  'homemade-apple card': 'd24553d7e8388e43c521939c4606930cec44f3352e5959ba29913d7ed462c122',
  'homemade-apple envelope': '064affcaf111179f63a1a4e4961f5ba2fffb948654b9adc7a9c038e02a940c91',
  'indie-flower card': '8f08cbf2ffd763eb921b62a543e5eddd461bdba2ce1a9939bf2f46f9316529b1',
  'indie-flower envelope': 'ea33b5da635af7687dabcd5b8b71e4a2a538307cd22e1c9aaef48cd1327a7c5b',
  'kalam card': '491d361187c3cc30620184f5c9913ef0c4a0d7a05360c3a84a580b1edd73ec57',
  'kalam envelope': '1da4fd3e96a3fa8c928e400ccbc941624a81b5a1656726727fed4b2f92979446',
}

describe('a letter without a design', () => {
  it('is drawn byte for byte as before designs: cards, envelopes, proofs, sheets and plotter files', async () => {
    expect(await legacyHashes()).toEqual(PINNED)
  })
})

const PINNED: Record<string, string> = {
  'caveat card': '7823ba3551286f3d6fe4fc122f04bbcf1084c17369b6a4cbd54fb7e43fed8383',
  'caveat envelope': '0efe47d1bd03ae772503e45630a1406a28e5bec7cfea1ab239978ab256455231',
  'caveat proof': 'b087e98f5417fa147decfd303b1d6347a3457cc004649898500282aa9801e89a',
  'caveat plotter proof': '622096f98663f8b5a00b18aaa9815ca26c9b60cd2e289198b64bfd0479468c8e',
  'caveat card.svg': '0a32fa8e48696092f1a556fb5f0763bc6495c44384c3225ee67f0785fc6b4575',
  'caveat card.gcode': '7c97cdd28c808434bb6d7c20e010dd3b9c8ecce113cb778c366d32d231cd54df',
  'caveat envelope.svg': '95dae8a6d8011d882d3ef89411b93f20db59a9a794f700417c86ab24f466d2d4',
  'caveat envelope.gcode': '13ff7cbaf0006daa5223a39270117710e7c24a1f5ebf0d921f91022ea79c2963',
  'dancing-script card': '40989872f39f0cfa4abe1487bfd19881813e0a21d8f4076f8317c5ae8cebede8',
  'dancing-script envelope': '7f3694c7fae58b53ba5d5e343ff92805200bf427a675fb330409e1bc155f23f3',
  'dancing-script proof': 'f8ec82ad91e49503cdfe50c72e585e5f9d8f2d16144083af5d47893dad9288cb',
  'dancing-script plotter proof': 'f76b584c04bc398e7c78c6460e06b3955aace66c1fe68ccfc5295caa122ed8d8',
  'dancing-script card.svg': '90aa6c8a12e3ca48196d473b92b78c8e7d0fa55b23b6ddf45c06ad90d02ddd9a',
  'dancing-script card.gcode': '06890aa47002dd47f5206d47e51b890168867444e4a4519e8cc7c79d9f8eb972',
  'dancing-script envelope.svg': 'e32b62906df3c23f46b2159b0e7460a73f06e73a43b994d277a2999be6a5c670',
  'dancing-script envelope.gcode': '6842cea5d601629958620b497de16413e6c9db9bcbeb2673137ec13b78998109',
  'homemade-apple card': '07594a1ace928bd04bbdab47c8c96b57d80e5f13285df2d5ccf562594e3bd08a',
  'homemade-apple envelope': 'cf684b32a2e3bf7c50f613164bca2c1edb65c9b7679122dbc7034e6a6945b423',
  'homemade-apple proof': '75b90262ef50e8ef972e32e536456e0a267c447ad7dadaf44b6b2773ce8a3d27',
  'homemade-apple plotter proof': 'c007082470cc3f9b86c48b335ffd93bcf98b89788980a40ba825042ab4dc8c31',
  'homemade-apple card.svg': '6220df774c5ec82826d75114503a4ef8a9fc8bbc29529bdd33fb03adcdaf9701',
  'homemade-apple card.gcode': '3fe3f70f8874c0e293ba6f4f091ea37c8436c712065c55764d98affcdfdf728a',
  'homemade-apple envelope.svg': '791f8c4768fa124d18c5919ad5a4624b71cbfddb15c4d0bebb09fbb62ca82899',
  'homemade-apple envelope.gcode': '155fef8eaf6cd9081d5d7ae5eee4f34f780a194cf570676aa7cd0b42f216133f',
  'indie-flower card': 'f178a15dbf1efd5db5f3d44d69d692fc4ff08260925a8ef0f7af207e82ee7d68',
  'indie-flower envelope': 'ab7cb653d65b79a949d151ab0ce3b5a565d40aabf47047ea32eda4df5abf12a9',
  'indie-flower proof': '2e87570c3d1b85e516c19f0af7efc04b20c1588a32da7305618cd62b39258aea',
  'indie-flower plotter proof': '40342026c32a3d6ed222e0c6ef6f1d52be3fc47c1ed216c3d900b3690b2c8765',
  'indie-flower card.svg': '70ff4c08daaa869e2395a929ce5e1822981233d09c2d90cb75f809fe01b6acab',
  'indie-flower card.gcode': 'a7db4937bd2ab3a7e359dbe5893bdcff5aec3dad2cd130308b7ebf0f524c8984',
  'indie-flower envelope.svg': 'd7e46e235d167f8d1929df51c572683e4062f79ec37d825775ce2ec5ad0f810d',
  'indie-flower envelope.gcode': '7e4417c6144bbd9e57571515ccf719fb0d4f948e2983cf8ac21f9ef58ed2c751',
  'kalam card': '9d3194158595438d2c2e9179baee9c8473745b820b88c2eed38f1561910dafb0',
  'kalam envelope': '698eb25824fadd5df53fad408fca52529ae79bfdd95f1877df7a3132abff7c50',
  'kalam proof': '6abad857614ef82e89869cad27e2bec2466b1a7789493c0de727ad4bd9011a63',
  'kalam plotter proof': '89c0e3f75b4f927afeb90a685633fad58fdb8028e22b2946a6960a38a523163f',
  'kalam card.svg': '9c63d8f9282860c937703e7da68718faed03ad322afab43627cee3647754801e',
  'kalam card.gcode': '47116c42c4a4fe091dfcfa864aecf097ec35535c86c895ae09e7800a6d99e6ba',
  'kalam envelope.svg': 'b96bf9625582ff44c48ad5cf440c4a72c653868e864d68e4b6daa27d59e0ec15',
  'kalam envelope.gcode': '615c8cb59bc609d02e5e4780068b5293a969534bc3fc09b15cdcd4cfbefaa7f7',
  'card sheets': 'a66eaabcea9b078199bbdc7706347ff71141ca1104b50b7d5eed332cb1ca5415',
  envelopes: '03fc925914973cdf2e6210065606c7c8ea17494b66b83849c96837b232d178ec',
  'door envelope': '445a01ad94f17329fc7a9f84e7dcfb57803d73bc4402c8573d15d965dc64fb1a',
  'door proof': '81b692091bb2d57e1e882e930da87c97b1aba54c3b28a2f094bec15dfe606983',
  'door plotter proof': 'a5ccd9cfb0d3228408464e636001dd5d45c1a8f0fae30f31038b7fcfa2cd24f5',
  'door envelope.svg': '182ba50231aba19e82b2b5e165ae88e6c188d7c74065d91117bf86dd25e30473',
  'door envelope.gcode': '36cf34c0d3d27d0d216413f459727005282f66799b6a5c40623509ab88a5992e',
}
