import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { verifyWebhook } from '@letters/sdk'

const [port = '4000', secret = ''] = process.argv.slice(2)

async function receive(request: IncomingMessage, response: ServerResponse) {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  try {
    const event = verifyWebhook<{ type: string; data: { id: string; status: string } }>(secret, request.headers, Buffer.concat(chunks))
    process.stdout.write(`${request.headers['webhook-id']} ${event.type} ${event.data.id}\n`) // dedupe by webhook-id
    response.writeHead(204).end()
  } catch {
    response.writeHead(400).end()
  }
}

createServer((request, response) => void receive(request, response)).listen(Number(port), '127.0.0.1', () => process.stdout.write(`listening on ${port}\n`))
