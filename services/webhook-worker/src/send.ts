import { lookup as dnsLookup, Resolver, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { hostOf, isPublicAddress, RefusedAddressError } from '@letters/webhooks'

/** What one POST to a receiver came to: its HTTP status, or the kind of error that left none. */
export type SendResult = { statusCode: number; durationMs: number } | { error: 'timeout' | 'connection' | 'refused_address'; durationMs: number }

/** At most this much of a receiver's answer is read; the rest is dropped with the socket. */
export const RESPONSE_BYTES_READ = 1024

/**
 * DNS queries of receivers' names, answered or given up within a few seconds. They run on
 * c-ares's own sockets, not on libuv's four threads as getaddrinfo does: a receiver whose name
 * server never answers cannot hold back the lookups of every other delivery.
 */
const resolver = new Resolver({ timeout: 2000, tries: 2 })

/** A name's IPv4 and IPv6 addresses from DNS (IPv4 first); an error only when neither came. */
function resolveBoth(hostname: string, callback: (err: Error | null, addresses: LookupAddress[]) => void): void {
  const found: Record<4 | 6, LookupAddress[]> = { 4: [], 6: [] }
  let pending = 2
  let failure: Error | null = null
  const answer = (family: 4 | 6) => (err: Error | null, addresses: string[]) => {
    if (err) failure = err
    else found[family] = addresses.map((address) => ({ address, family }))
    if (--pending > 0) return
    const all = [...found[4], ...found[6]]
    callback(all.length > 0 ? null : (failure ?? new Error(`no address for ${hostname}`)), all)
  }
  resolver.resolve4(hostname, answer(4))
  resolver.resolve6(hostname, answer(6))
}

/**
 * A DNS lookup that fails with RefusedAddressError when the name resolves to any non-public
 * address. It is the lookup of the connection itself, so the address checked is the address
 * connected to: a name that changes its answer after registration (DNS rebinding) is caught.
 * A name without a dot (localhost, a host of the local network) is looked up as the system does,
 * hosts file included, and refused like any other local address.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  const lookUp = hostname.includes('.')
    ? resolveBoth
    : (name: string, done: (err: Error | null, addresses: LookupAddress[]) => void) => dnsLookup(name, { all: true }, done)
  lookUp(hostname, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0)
    if (addresses.length === 0 || !addresses.every((entry) => isPublicAddress(entry.address))) return callback(new RefusedAddressError(hostname), '', 0)
    if (options.all) return (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, addresses)
    return callback(null, addresses[0]!.address, addresses[0]!.family)
  })
}

class DeliveryTimeout extends Error {
  override name = 'DeliveryTimeout'
}

/**
 * POSTs `body` to `url` with `headers`: no redirect followed (a 3xx is an answer like any
 * other non-2xx), the whole exchange bounded by `timeoutMs`, at most RESPONSE_BYTES_READ bytes
 * of the answer read. Unless `allowPrivate`, only public addresses are connected to. Unless
 * `allowHttp`, only https:// URLs are: an endpoint registered while http was allowed gets no
 * recipient's data in clear text once it is not (`refused_address`, nothing sent).
 */
export function send(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean; allowHttp: boolean },
): Promise<SendResult> {
  const started = performance.now()
  const durationMs = () => Math.round(performance.now() - started)
  if (url.protocol !== 'https:' && !options.allowHttp) return Promise.resolve({ error: 'refused_address', durationMs: 0 })
  const host = hostOf(url)
  if (!options.allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host)) return Promise.resolve({ error: 'refused_address', durationMs: 0 })
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve) => {
    let settled = false
    const finish = (result: SendResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        agent: false,
        ...(options.allowPrivate ? {} : { lookup: publicOnlyLookup }),
      },
      (response) => {
        let read = 0
        const done = () => {
          finish({ statusCode: response.statusCode ?? 0, durationMs: durationMs() })
          response.destroy()
        }
        response.on('data', (chunk: Buffer) => {
          read += chunk.length
          if (read >= RESPONSE_BYTES_READ) done()
        })
        response.on('end', done)
        response.on('error', done)
        response.on('close', done)
      },
    )
    const timer = setTimeout(() => request.destroy(new DeliveryTimeout()), options.timeoutMs)
    request.on('error', (err) => {
      const error = err instanceof DeliveryTimeout ? 'timeout' : err instanceof RefusedAddressError ? 'refused_address' : 'connection'
      finish({ error, durationMs: durationMs() })
    })
    request.end(body)
  })
}
