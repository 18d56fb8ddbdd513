import { describe, expect, it } from 'vitest'
import { clientAddress } from '../src/plugins/app/client-address.js'

describe('clientAddress', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(clientAddress('203.0.113.7')).toBe('203.0.113.7')
  })

  it('counts an IPv6 client by its /64, whatever the spelling and the host part', () => {
    const block = '2001:db8:0:42::/64'
    for (const ip of [
      '2001:db8:0:42::1',
      '2001:0db8:0000:0042:0000:0000:0000:0001',
      '2001:db8:0:42:ffff:1:2:3',
      '2001:DB8:0:42::abcd',
      '2001:db8:0:42::9%eth0',
    ])
      expect(clientAddress(ip), ip).toBe(block)
    expect(clientAddress('2001:db8:0:43::1')).toBe('2001:db8:0:43::/64')
    expect(clientAddress('::1')).toBe('0:0:0:0::/64')
  })

  it('reads an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(clientAddress('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(clientAddress('::ffff:cb00:7107')).toBe('203.0.113.7')
  })
})
