import { describe, expect, it } from 'vitest'
import { assertPublicHost, isPublicAddress, RefusedAddressError } from '../src/index.js'

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.100.100.200',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '224.0.0.1',
  ])('refuses %s', (address) => expect(isPublicAddress(address)).toBe(false))
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('accepts %s', (address) => expect(isPublicAddress(address)).toBe(true))
})

describe('assertPublicHost', () => {
  it('refuses a name that resolves to loopback', async () => {
    await expect(assertPublicHost('localhost')).rejects.toBeInstanceOf(RefusedAddressError)
  })
  it('refuses an IP literal that is private without asking DNS', async () => {
    await expect(assertPublicHost('192.168.0.10')).rejects.toBeInstanceOf(RefusedAddressError)
    await expect(assertPublicHost('8.8.8.8')).resolves.toBeUndefined()
  })
})
