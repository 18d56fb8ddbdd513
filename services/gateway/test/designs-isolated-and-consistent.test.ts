// Designs under attack: another account's designs and signatures, uploads racing letters and each
// other, hostile text. Each test fails if the rule it names breaks.
//
//   npx vitest run services/gateway/test/designs-isolated-and-consistent.test.ts
import { describe, expect } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import postgres from 'postgres'
import { artworks, letters } from '@letters/db'
import { adminAccount } from '@letters/test/support/accounts'
import { cardSvg, logoSvg, pngOf, signatureSvg } from '@letters/test/support/artwork'
import { singleLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { publicClient } from '@letters/test/support/gateway'
import { until } from '@letters/test/support/wait'

const it = base.extend({ gatewayOptions: { isolate: 'rt-designs-held', env: { PROOF_RATE_LIMIT_MAX: '1000' } }, accountCredits: 500 })

const balanceOf = async (admin: { get(url: string): Promise<{ json<T>(): T }> }, id: string) =>
  (await admin.get(`/admin/accounts/${id}`)).json<{ balance: number }>().balance

describe('another account’s designs and signatures, on every new route', () => {
  it('answers 404 for another account’s (or a non-UUID) design on GET, preview, PATCH and PUT …/artwork, and stores nothing', async ({
    gateway,
    admin,
    account,
    client,
  }) => {
    const other = await adminAccount(gateway, 50, 'Otra')
    await admin.put(`/admin/accounts/${other.id}/card-designs/${other.cardDesignId}/artwork`, cardSvg('A6'), 'image/svg+xml')
    for (const url of [
      `/card-designs/${other.cardDesignId}`,
      `/card-designs/${other.cardDesignId}/preview`,
      `/envelope-designs/${other.envelopeDesignId}`,
      '/card-designs/not-a-uuid',
      '/card-designs/not-a-uuid/preview',
      "/card-designs/' OR 1=1 --",
      '/envelope-designs/00000000-0000-0000-0000-000000000000',
      `/card-designs/${other.cardDesignId.toUpperCase()}/preview`,
    ]) {
      const answer = await client.get(url)
      expect(answer.statusCode, url).toBe(404)
      expect(answer.body, url).not.toContain('PNG')
    }
    // Ops calling the right route with another account's id in the path.
    const crossed = [
      await admin.put(`/admin/accounts/${account.id}/card-designs/${other.cardDesignId}/artwork`, cardSvg('A6'), 'image/svg+xml'),
      await admin.put(`/admin/accounts/${account.id}/envelope-designs/${other.envelopeDesignId}/artwork`, logoSvg, 'image/svg+xml'),
      await admin.put(`/admin/accounts/${account.id}/signatures/${other.signatureId}/artwork`, signatureSvg, 'image/svg+xml'),
      await admin.patch(`/admin/accounts/${account.id}/card-designs/${other.cardDesignId}`, { format: 'A5' }),
      await admin.patch(`/admin/accounts/${account.id}/envelope-designs/${other.envelopeDesignId}`, { paperColor: '#000000' }),
    ]
    expect(crossed.map((answer) => answer.statusCode)).toEqual([404, 404, 404, 404, 404])
    const stored = await gateway.db
      .select({ owner: artworks.ownerId })
      .from(artworks)
      .where(inArray(artworks.ownerId, [other.cardDesignId, other.envelopeDesignId, other.signatureId]))
    expect(stored).toHaveLength(1)
    expect((await admin.put(`/admin/accounts/${account.id}/card-designs/not-a-uuid/artwork`, cardSvg('A6'), 'image/svg+xml')).statusCode).toBe(400)
  })

  it('refuses another account’s signatureId on POST /single, /card, /cards/bulk and a campaign, charging nothing', async ({
    gateway,
    admin,
    account,
    client,
    campaign,
  }) => {
    const other = await adminAccount(gateway, 50, 'Otra')
    await admin.put(`/admin/accounts/${other.id}/signatures/${other.signatureId}/artwork`, signatureSvg, 'image/svg+xml')
    const before = await balanceOf(admin, account.id)
    const single = await client.post('/single', singleLetter(account, { signatureId: other.signatureId }))
    const card = await client.post('/card', {
      campaignId: campaign,
      name: 'Ana',
      surname: 'Ruiz',
      address: 'Calle Mayor 1',
      zip: '28013',
      city: 'Madrid',
      country: 'ES',
      variables: { cupon: 'A1' },
      signatureId: other.signatureId,
    })
    const bulk = await client.post(
      `/cards/bulk?campaignId=${campaign}&signatureId=${other.signatureId}`,
      'name,surname,address,zip,city,country,cupon\nAna,Ruiz,Calle Mayor 1,28013,Madrid,ES,A1\n',
      { 'content-type': 'text/csv' },
    )
    const madeCampaign = await admin.post(`/admin/accounts/${account.id}/campaigns`, {
      name: 'Robada',
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      signatureId: other.signatureId,
      message: 'Hola',
      variables: [],
    })
    const notUuid = await client.post('/single', singleLetter(account, { signatureId: 'x' }))
    console.log(
      `### another account's signatureId: /single ${single.statusCode}, /card ${card.statusCode}, /cards/bulk ${bulk.statusCode}, campaign ${madeCampaign.statusCode}`,
    )
    expect([single.statusCode, card.statusCode, bulk.statusCode, madeCampaign.statusCode, notUuid.statusCode]).toEqual([400, 400, 400, 400, 400])
    expect(await balanceOf(admin, account.id)).toBe(before)
    expect(await gateway.db.select({ id: letters.id }).from(letters).where(eq(letters.signatureId, other.signatureId))).toEqual([])
  })

  it('takes only pages 1 to 10 in proof.png, and never shows another account’s or another mode’s letter', async ({ gateway, account, client, testClient }) => {
    const sent = await client.post('/single', singleLetter(account))
    expect(sent.statusCode, sent.body).toBe(200)
    const id = sent.json<{ cardId: string }>().cardId
    // (1.5, 0x1 and ' 1 ' are read as page 1: harmless.)
    const pages = ['0', '-1', '11', 'abc', '1e3', '99999999999999999999', '', '1&page=2', '%00', 'NaN', 'Infinity', '-0', '[1]']
    const answers = await Promise.all(pages.map(async (page) => [page, (await client.get(`/cards/${id}/proof.png?page=${page}`)).statusCode] as const))
    console.log(`### proof.png page parameter: ${JSON.stringify(Object.fromEntries(answers))}`)
    for (const [page, status] of answers) expect([400, 404], `page=${page}`).toContain(status)
    expect((await client.get(`/cards/${id}/proof.png?page=1`)).statusCode).toBe(200)
    // Two pages (handwriting, envelope) for a design without artwork: page 3 is not there.
    expect((await client.get(`/cards/${id}/proof.png?page=3`)).statusCode).toBe(404)
    const other = await adminAccount(gateway, 10, 'Otra')
    expect((await publicClient(gateway, other.apiKey).get(`/cards/${id}/proof.png?page=1`)).statusCode).toBe(404)
    expect((await testClient.get(`/cards/${id}/proof.png?page=1`)).statusCode).toBe(404)
  })
})

describe('uploads racing letters, each other and dropped connections', () => {
  it('gives every letter accepted during a stream of uploads one stored version, named with its own hash: the latest stored or the one under way', async ({
    gateway,
    admin,
    account,
    client,
  }) => {
    const colours = ['#aa0000', '#00aa00', '#0000aa', '#aaaa00', '#00aaaa', '#aa00aa']
    // Uploads and rounds of letters in step, each racing the other: round r is sent once r
    // uploads are stored, and upload r + 1 starts once round r is answered, so round r's letters
    // are accepted while upload r + 1 (version r + 1) is under way, however slow the machine is.
    let uploaded = 0
    let roundsDone = 0
    const uploads = (async () => {
      const answers: number[] = []
      for (const [index, fill] of colours.entries()) {
        await until(`round ${index} answered`, () => roundsDone >= index)
        answers.push(
          (await admin.put(`/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`, cardSvg('A6', { fill }), 'image/svg+xml')).statusCode,
        )
        uploaded++
      }
      return answers
    })()
    const sent: Array<{ id: string; round: number }> = []
    const sending = (async () => {
      for (let round = 0; round < 6; round++) {
        await until(`${round} uploads stored`, () => uploaded >= round, { everyMs: 10 })
        const answers = await Promise.all([0, 1, 2, 3].map(() => client.post('/single', singleLetter(account))))
        for (const answer of answers) {
          expect(answer.statusCode, answer.body).toBe(200)
          sent.push({ id: answer.json<{ cardId: string }>().cardId, round })
        }
        roundsDone++
      }
    })()
    expect(await uploads).toEqual(colours.map(() => 200))
    await sending
    const stored = new Map((await gateway.db.select().from(artworks).where(eq(artworks.ownerId, account.cardDesignId))).map((row) => [row.version, row.sha256]))
    expect([...stored.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6])
    const specs = new Map(
      (
        await gateway.db
          .select({ id: letters.id, spec: letters.printSpec })
          .from(letters)
          .where(
            inArray(
              letters.id,
              sent.map(({ id }) => id),
            ),
          )
      ).map(({ id, spec }) => [id, spec?.card.artwork]),
    )
    const named = sent.map(({ id, round }) => ({ round, version: specs.get(id)?.version ?? 0, sha256: specs.get(id)?.sha256 }))
    console.log(`### 24 letters during 6 uploads: versions named ${JSON.stringify(named.map(({ version }) => version))}`)
    for (const { round, version, sha256 } of named) {
      // Version 0: no artwork yet, the first upload still under way.
      expect([round, round + 1], `a letter of round ${round}`).toContain(version)
      if (version > 0) expect(stored.get(version)).toBe(sha256)
    }
    expect(new Set(named.map(({ version }) => version)).size).toBeGreaterThan(1)
  }, 60_000)

  it('numbers two uploads at once 1 and 2, and one whose transaction a terminated backend cuts is answered 503 and stores nothing', async ({
    gateway,
    admin,
    account,
  }) => {
    const path = `/admin/accounts/${account.id}/signatures/${account.signatureId}/artwork`
    const both = await Promise.all([
      admin.put(path, signatureSvg, 'image/svg+xml'),
      admin.put(path, await pngOf(600, 200, { alpha: true }).then(withInk), 'image/png'),
    ])
    expect(both.map((answer) => answer.statusCode)).toEqual([200, 200])
    expect(both.map((answer) => answer.json<{ artwork: { version: number } }>().artwork.version).sort()).toEqual([1, 2])

    // Each cut falls inside an upload's transaction, before its commit: the upload waits there for
    // the signature's row, which another connection holds until the gateway's backends are gone.
    // (A cut after the commit, while the answer is read back, is a 503 for a stored version.)
    const locker = postgres(gateway.config.databaseUrl, { max: 1, onnotice: () => {} })
    let ok = 0
    const statuses: number[] = []
    // An upload sent just after a cut may meet a pooled connection the gateway has not yet seen
    // die, and be answered before it reaches the row: that attempt is not a cut, and another is made.
    let unwaited = 0
    try {
      for (let attempt = 0; statuses.length < 6 && attempt < 12; attempt++) {
        const round = statuses.length
        const cut = await locker.begin(async (tx) => {
          await tx`SELECT id FROM signatures WHERE id = ${account.signatureId} FOR UPDATE`
          let settled = false
          // `then` sends it: an injected request goes out when it is first awaited.
          const answer = admin.put(path, signatureSvg.replace('115 34', `115 ${30 + round}`), 'image/svg+xml').then((response) => {
            settled = true
            return response
          })
          const waited = await until(
            'the upload waiting for the row, in its transaction, or answered',
            async () => {
              if (settled) return 'answered'
              // A transaction reads the activity as it first saw it unless told to look again.
              await tx`SELECT pg_stat_clear_snapshot()`
              const waiting = await tx`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                AND backend_type = 'client backend' AND wait_event_type = 'Lock'`
              return waiting.length > 0 && 'waiting'
            },
            { timeoutMs: 30_000, everyMs: 5 },
          )
          if (waited === 'waiting') {
            await tx`SELECT pg_stat_clear_snapshot()`
            await tx`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
          }
          return { answer, waited }
        })
        const answer = await cut.answer
        if (cut.waited !== 'waiting') {
          expect(answer.statusCode, 'an upload answered before it reached the locked row').toBe(503)
          unwaited++
          continue
        }
        statuses.push(answer.statusCode)
        if (answer.statusCode === 200) ok++
      }
    } finally {
      await locker.end()
    }
    // The pool reconnects; every version is whole (print, preview, drawing) and none is missing.
    const read = () => gateway.db.select().from(artworks).where(eq(artworks.ownerId, account.signatureId))
    await until('the pool reconnected', () =>
      read().then(
        () => true,
        () => false,
      ),
    )
    const rows = await read()
    console.log(`### uploads cut by pg_terminate_backend: ${JSON.stringify(statuses)}; answered before the row: ${unwaited}; versions stored ${rows.length}`)
    expect(statuses).toHaveLength(6)
    expect(statuses).toEqual(statuses.map(() => 503))
    expect(rows.length).toBe(2 + ok)
    expect(rows.map((row) => row.version).sort((a, b) => a - b)).toEqual(rows.map((_, index) => index + 1))
    for (const row of rows) expect(row.print.length > 0 && row.preview.length > 0 && row.drawing !== null).toBe(true)
  }, 60_000)
})

describe('hostile text in designs, senders and return addresses', () => {
  it('refuses 10,000-character names and return addresses the handwriting fonts cannot write', async ({ admin, account }) => {
    const long = 'x'.repeat(10_000)
    const answers = [
      await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: long }),
      await admin.post(`/admin/accounts/${account.id}/envelope-designs`, { name: 'Sobre', stockCode: `S${'1'.repeat(100)}` }),
      await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: 'X', stockCode: '<b>STOCK</b>' }),
      await admin.post(`/admin/accounts/${account.id}/senders`, {
        name: 'Ana',
        returnAddress: { name: 'Ana', address: 'Calle ☃ 1', zip: '28013', city: 'Madrid', country: 'ES' },
      }),
      await admin.post(`/admin/accounts/${account.id}/senders`, {
        name: 'Ana',
        returnAddress: { name: '王小明', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', country: 'ES' },
      }),
      await admin.post(`/admin/accounts/${account.id}/senders`, {
        name: 'Ana',
        returnAddress: { name: 'Ana', address: long, zip: '28013', city: 'Madrid', country: 'ES' },
      }),
    ]
    console.log(`### hostile text: ${answers.map((answer) => answer.statusCode).join(', ')}`)
    expect(answers.map((answer) => answer.statusCode)).toEqual([400, 400, 400, 400, 400, 400])
  })
})

/** A transparent PNG with some ink: a signature the upload accepts. */
async function withInk(png: Buffer): Promise<Buffer> {
  const sharp = (await import('sharp')).default
  return sharp(png)
    .composite([
      {
        input: Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="600" height="200"><path d="M20 150 C 200 20, 300 20, 580 150" stroke="#000" stroke-width="6" fill="none"/></svg>',
        ),
      },
    ])
    .png()
    .toBuffer()
}
