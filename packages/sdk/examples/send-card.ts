import { createClient } from '@letters/sdk'

const [baseUrl = 'http://127.0.0.1:3000', apiKey = ''] = process.argv.slice(2)
const client = createClient({ apiKey, baseUrl })
const { data: company } = await client.GET('/company-data')
const { cardDesigns, envelopeDesigns, senders } = company!.data
const { data: created } = await client.POST('/single', {
  body: {
    cardDesignId: cardDesigns[0]!.id,
    envelopeDesignId: envelopeDesigns[0]!.id,
    senderId: senders[0]!.id,
    message: 'Querida Lucía, gracias por tu compra.',
    name: 'Lucía',
    surname: 'García',
    address: 'Calle Mayor 1',
    zip: '28013',
    city: 'Madrid',
    province: 'Madrid',
    country: 'ES',
  },
})
const { data: card } = await client.GET('/cards/{cardId}', { params: { path: { cardId: created!.cardId } } })
process.stdout.write(`${card!.id} ${card!.status}\n`)
