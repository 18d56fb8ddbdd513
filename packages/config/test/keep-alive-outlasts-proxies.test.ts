import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/index.js'

describe("the gateway's keep-alive", () => {
  it('keeps an idle connection 75 s by default, longer than the 60 s the proxies in front keep theirs', () => {
    expect(loadConfig({}).http.keepAliveTimeoutMs).toBe(75_000)
  })

  it('starts with request and headers timeouts shorter than the keep-alive (they count from a request, not from the idle time before it)', () => {
    expect(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '3000' }).http).toEqual({
      requestTimeoutMs: 3000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 75_000,
      maxConnections: 10_000,
    })
    expect(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '2000', HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '620000' }).http.keepAliveTimeoutMs).toBe(
      620_000,
    )
  })

  it("refuses one longer than Node's longest timer, to which Node would cut it: the connection would close before the keep-alive it advertises", () => {
    expect(loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '2147483647' }).http.keepAliveTimeoutMs).toBe(2_147_483_647)
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '2147483648' })).toThrow(
      "HTTP_KEEP_ALIVE_TIMEOUT_MS=2147483648: must be at most 2147483647 ms (24.8 days), the longest timer Node keeps; past it Node cuts the connection's timer short, and an idle connection would close sooner than this keep-alive, which its answers advertise (Keep-Alive: timeout=2147483)",
    )
  })

  it.each(['HTTP_REQUEST_TIMEOUT_MS', 'HTTP_HEADERS_TIMEOUT_MS'])("refuses %s longer than Node's longest timer", (name) => {
    expect(() => loadConfig({ [name]: '3000000000' })).toThrow(
      `${name}=3000000000: must be at most 2147483647 ms (24.8 days), the longest timer Node keeps; a longer one would fire at once or be cut short`,
    )
  })
})
