import { isIPv4, isIPv6 } from 'node:net'

/**
 * The address the per-address limits count a client by: an IPv4 address as it is; an IPv6
 * address by its /64, the block one subscriber or host is given and may rotate addresses within
 * at will (per /128, a client could pick a fresh address for every guess). Written in one
 * spelling, so that `2001:db8::1` and `2001:0db8:0:0::1` are one client; an IPv4-mapped IPv6
 * address is its IPv4 address.
 */
export function clientAddress(ip: string): string {
  if (!isIPv6(ip)) return ip
  const groups = ipv6Groups(ip)
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff)
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (a zone index dropped, a trailing IPv4 part read as two groups). */
function ipv6Groups(ip: string): number[] {
  const address = ip.split('%')[0]!
  const [head = '', tail] = address.split('::') as [string, string | undefined]
  const parse = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!isIPv4(group)) return [parseInt(group, 16)]
          const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number]
          return [(a << 8) | b, (c << 8) | d]
        })
  const front = parse(head)
  const back = tail === undefined ? [] : parse(tail)
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back]
}
