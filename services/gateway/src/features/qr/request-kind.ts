import type { IncomingHttpHeaders } from 'node:http'
import type { QrRequest } from '@letters/letters'

/**
 * The user agents of link previews and crawlers: a chat app or social network fetching the link
 * to show a card of it, a search engine indexing it. None is a person scanning the letter. Past
 * the names, any agent calling itself a bot, crawler, spider or preview; but a Cubot, a phone.
 */
const PREVIEW_AGENT =
  /facebookexternalhit|facebot|twitterbot|slackbot|slack-imgproxy|whatsapp|telegrambot|discordbot|linkedinbot|skypeuripreview|googlebot|google-|mediapartners|inspectiontool|bingbot|applebot|redditbot|pinterestbot|embedly|iframely|vkshare|headless|^curl\/|^wget\/|python-requests|(?<!cu)bot|crawler|spider|preview/i

const headerValue = (headers: IncomingHttpHeaders, name: string): string => {
  const value = headers[name]
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().toLowerCase()
}

/**
 * A browser fetching the link ahead of a click (Chrome's `Sec-Purpose: prefetch` and
 * `Purpose: prefetch`, Firefox's `X-Moz: prefetch`, Safari's `X-Purpose: preview`), or a HEAD,
 * which nobody sends by opening a link.
 */
function isPrefetch(method: string, headers: IncomingHttpHeaders): boolean {
  return (
    method === 'HEAD' ||
    headerValue(headers, 'purpose') === 'prefetch' ||
    headerValue(headers, 'sec-purpose').startsWith('prefetch') ||
    headerValue(headers, 'x-moz') === 'prefetch' ||
    headerValue(headers, 'x-purpose') === 'preview'
  )
}

/** What a request for a QR link is before counting: only a `scan` may count. */
export function qrRequestKind(method: string, headers: IncomingHttpHeaders): QrRequest {
  if (isPrefetch(method, headers)) return 'prefetch'
  // A phone's browser always names itself: a request that does not is a program's.
  const agent = headerValue(headers, 'user-agent')
  if (agent === '' || PREVIEW_AGENT.test(agent)) return 'preview'
  return 'scan'
}
