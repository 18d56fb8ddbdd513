import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

/**
 * Whether a webhook may be sent to this IP address: only a public unicast one. Loopback,
 * private, link-local (the cloud metadata service, 169.254.169.254, among them), unique-local,
 * carrier-grade NAT (Alibaba's metadata, 100.100.100.200), multicast, reserved and unspecified
 * addresses are refused; an IPv4 address written as IPv6 is judged as IPv4.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6
    // ::ffff:a.b.c.d (mapped) and the deprecated ::a.b.c.d (compatible) are judged by their IPv4 address.
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address()
    else if (v6.parts.slice(0, 6).every((part) => part === 0)) parsed = ipaddr.fromByteArray(v6.toByteArray().slice(12))
  }
  return parsed.range() === 'unicast'
}

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError'
  constructor(readonly host: string) {
    super(`${host} resolves to an address webhooks are not sent to`)
  }
}

/** The host of a URL as DNS takes it: IPv6 literals without their brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1')

/**
 * Resolves `host` and throws RefusedAddressError if any of its addresses is not public: a name
 * with one private address among public ones could be sent there.
 */
export async function assertPublicHost(host: string): Promise<void> {
  const addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address)
  if (addresses.length === 0 || !addresses.every(isPublicAddress)) throw new RefusedAddressError(host)
}
