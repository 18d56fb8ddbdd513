/**
 * The plan of a history fill, before any SQL: its accounts (their designs, senders, campaigns and
 * webhook endpoints, and the ways each makes its letters), the share of each kind of letter, and the
 * service's defaults the history follows. Deterministic: the same size, the same plan.
 */
import { loadConfig } from '@letters/config'
import { fontNames, publicApi } from '@letters/contracts'
import { letterStatuses } from '@letters/db'

export interface HistoryShape {
  letters: number
  accounts: number
  bigAccountLetters: number
  campaigns: number
  webhookEndpoints: number
  months: number
}

export const MONTHS = 18

const MAX_ACCOUNTS = 200

/** Letters per account before the 200 accounts are reached: a small fill has fewer accounts, never fewer than 2. */
const LETTERS_PER_ACCOUNT = 100

/** The share of all letters held by the one big account (97k of 1M). */
const BIG_ACCOUNT_SHARE = 0.097

/** The big account's campaigns: 45 of ordinary size and these few, each a handful of letters sent in one go. */
const BIG_ACCOUNT_CAMPAIGNS = 45

export const TINY_CAMPAIGNS = [
  { letters: 3, at: 0.15 },
  { letters: 5, at: 0.35 },
  { letters: 8, at: 0.55 },
  { letters: 2, at: 0.75 },
  { letters: 6, at: 0.9 },
]

/** Distinct recipients the letters are drawn from (their addresses, names and checks are built once). */
export const RECIPIENT_POOL = 50_000

// Shares of letters. A letter's outcome is drawn once: cancelled, failed, reprinted or not.
export const TEST_SHARE = 0.03

export const SCHEDULED_SHARE = 0.05

export const CAMPAIGN_SHARE = 0.55

export const CANCELLED_SHARE = 0.015

export const FAILED_SHARE = 0.002

export const REPRINTED_SHARE = 0.005

/** Live letters printed through a batch (PRINTER=batch) rather than one by one. */
export const BATCHED_SHARE = 0.2

/** The service's defaults: the history is the one a service run with them leaves. */
const defaults = loadConfig({})

/** A batch's most letters (BATCH_MAX_LETTERS). */
export const BATCH_MAX_LETTERS = defaults.batch.maxLetters

/** PERSONAL_DATA_RETENTION_MS in days (90): an erasable letter is erased this long after its last change. */
export const PERSONAL_DATA_RETENTION_DAYS = defaults.personalDataRetentionMs / 86_400_000

/** How long a key is remembered, and the hour past it the key cleanup (purgeExpiredIdempotencyKeys) waits. */
export const IDEMPOTENCY_KEPT_HOURS = publicApi.IDEMPOTENCY_TTL_HOURS + 1

/** WEBHOOK_RETRY_SCHEDULE's default, as the delay before each attempt after the first (ms, cumulative); 8 attempts in all. */
export const RETRY_CUMULATIVE_MS = defaults.webhooks.retryScheduleMs.reduce((sums, delay) => [...sums, sums.at(-1)! + delay], [0])

/** WEBHOOK_TIMEOUT_MS. */
export const WEBHOOK_TIMEOUT_MS = defaults.webhooks.timeoutMs

const allEventTypes = letterStatuses.map((status) => `letter.${status}`)

interface CardPlan {
  name: string
  format: 'A6' | 'A5'
  production: 'printed' | 'preprinted'
  stockCode: string
}

interface EnvelopePlan {
  name: string
  format: 'C6' | 'C5'
  stockCode: string
  paperColor: string
}

/** What a letter is made with: a campaign (`campaign` is its number in the account), or one of the account's ways of sending single letters. */
interface ChoicePlan {
  choice: number
  campaign: number | null
  name: string | null
  card: number
  envelope: number
  sender: number
  signature: boolean
  font: string | null
  template: string
}

interface EndpointPlan {
  endpoint: number
  events: string[]
  /** The share of its deliveries that fail every attempt. */
  failRate: number
}

export interface AccountPlan {
  account: number
  name: string
  cards: CardPlan[]
  envelopes: EnvelopePlan[]
  senders: number
  /** Campaigns of ordinary size; the tiny ones follow them (the big account only). */
  campaigns: number
  tinyCampaigns: number
  singles: number
  choices: ChoicePlan[]
  endpoints: EndpointPlan[]
}

/** A small deterministic generator (mulberry32) for the plan of the accounts: the same fill, the same accounts. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const BUSINESSES = [
  'Floristería',
  'Librería',
  'Papelería',
  'Bodega',
  'Óptica',
  'Clínica Dental',
  'Inmobiliaria',
  'Academia',
  'Joyería',
  'Pastelería',
  'Gestoría',
  'Hotel',
  'Gimnasio',
  'Vinoteca',
  'Estudio de Yoga',
  'Tienda de Bicis',
  'Herboristería',
  'Galería',
  'Taller',
  'Perfumería',
]

const BRANDS = ['Luna', 'El Olivo', 'Aurora', 'La Encina', 'Mar Azul', 'Sol de Mayo', 'Alameda', 'La Brújula', 'Candela', 'El Faro']

const CAMPAIGN_THEMES = [
  'Navidad',
  'Aniversario',
  'Bienvenida',
  'Rebajas de enero',
  'San Valentín',
  'Vuelta al cole',
  'Verano',
  'Black Friday',
  'Gracias',
  'Día de la Madre',
]

const PHRASES = [
  'muchas gracias por confiar en nosotros un año más. Hemos preparado cada detalle con el mismo cuidado de siempre y esperamos que lo disfrutes tanto como nosotros al hacerlo.',
  'queríamos escribirte de nuestro puño y letra para darte la bienvenida. Si necesitas cualquier cosa, pásate por la tienda o escríbenos: estaremos encantados de ayudarte.',
  'se acercan unas fechas muy especiales y no queríamos dejar pasar la ocasión de desearte lo mejor a ti y a los tuyos. Te esperamos pronto con alguna sorpresa.',
  'ha pasado un año desde tu primera visita y queríamos agradecértelo. Como regalo, en tu próxima compra tienes un pequeño detalle esperándote en el mostrador.',
  'gracias por tu pedido. Lo hemos preparado a mano y esperamos que llegue en perfecto estado; si algo no fuera como esperabas, dínoslo y lo arreglamos enseguida.',
]

/** The accounts of a fill of `letters`: the same for the same count. Account 1 is the big one. */
export function planAccounts(letters: number): AccountPlan[] {
  const count = Math.min(MAX_ACCOUNTS, Math.max(2, Math.floor(letters / LETTERS_PER_ACCOUNT)))
  return Array.from({ length: count }, (_, index) => planAccount(index + 1))
}

function planAccount(account: number): AccountPlan {
  const random = seeded(account * 7919 + 17)
  const big = account === 1
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!
  const name = big
    ? 'Grupo Editorial Mediterráneo S.A.'
    : `${BUSINESSES[(account - 2) % BUSINESSES.length]} ${BRANDS[Math.floor((account - 2) / BUSINESSES.length) % BRANDS.length]}`
  const cards: CardPlan[] = [
    { name: 'Tarjeta clásica', format: 'A6', production: 'printed', stockCode: 'CARTULINA-A6-350' },
    account % 5 === 0
      ? { name: 'Tarjeta con logotipo impreso', format: 'A6', production: 'preprinted', stockCode: `PRE-A6-${String(account).padStart(3, '0')}` }
      : { name: 'Tarjeta verjurada', format: 'A6', production: 'printed', stockCode: 'CARTULINA-A6-300-VERJURADA' },
  ]
  const envelopes: EnvelopePlan[] = [
    { name: 'Sobre blanco', format: 'C6', stockCode: 'SOBRE-C6-BLANCO', paperColor: '#FFFFFF' },
    { name: 'Sobre kraft', format: 'C6', stockCode: 'SOBRE-C6-KRAFT', paperColor: '#C8A27A' },
  ]
  if (big) {
    cards.push({ name: 'Tarjeta grande', format: 'A5', production: 'printed', stockCode: 'CARTULINA-A5-350' })
    cards.push({ name: 'Tarjeta de Navidad preimpresa', format: 'A6', production: 'preprinted', stockCode: 'PRE-A6-MED-NAVIDAD' })
    envelopes.push({ name: 'Sobre grande', format: 'C5', stockCode: 'SOBRE-C5-BLANCO', paperColor: '#FFFFFF' })
  }
  // An A5 card goes in the C5 envelope; the others in one of the C6 ones.
  const envelopeFor = (card: number, turn: number) => (cards[card - 1]!.format === 'A5' ? 3 : (turn % 2) + 1)
  const senders = big ? 2 : 1
  const campaigns = big ? BIG_ACCOUNT_CAMPAIGNS : 2 + Math.floor(random() * 4)
  const tinyCampaigns = big ? TINY_CAMPAIGNS.length : 0
  const choices: ChoicePlan[] = []
  for (let k = 1; k <= campaigns + tinyCampaigns; k++) {
    const card = ((k - 1) % cards.length) + 1
    const theme = CAMPAIGN_THEMES[(k + account) % CAMPAIGN_THEMES.length]!
    choices.push({
      choice: k,
      campaign: k,
      name: k > campaigns ? `${theme}: clientes VIP ${k - campaigns}` : `${theme} ${2025 + (k % 2)}`,
      card,
      envelope: envelopeFor(card, k),
      sender: ((k - 1) % senders) + 1,
      signature: k % 2 === 1,
      font: k % 3 === 0 ? null : fontNames[k % fontNames.length]!,
      template: `Hola {{nombre}}, ${PHRASES[(k + account) % PHRASES.length]}`,
    })
  }
  // Single letters: each card, with the account's signature and without.
  const singles = cards.length * 2
  for (let v = 1; v <= singles; v++) {
    const card = ((v - 1) % cards.length) + 1
    choices.push({
      choice: 1000 + v,
      campaign: null,
      name: null,
      card,
      envelope: envelopeFor(card, v),
      sender: ((v - 1) % senders) + 1,
      signature: v <= cards.length,
      font: pick([...fontNames, null]),
      template: `Hola, {{nombre}}: ${PHRASES[(v + account * 3) % PHRASES.length]}`,
    })
  }
  const endpoints: EndpointPlan[] = []
  if (big) {
    // Everything, on the integration that mirrors every letter; the mailing report; the support desk.
    endpoints.push({ endpoint: 1, events: allEventTypes, failRate: 0.002 })
    endpoints.push({ endpoint: 2, events: ['letter.mailed', 'letter.address_rejected'], failRate: 0.01 })
    endpoints.push({ endpoint: 3, events: ['letter.address_rejected', 'letter.cancelled', 'letter.failed'], failRate: 0 })
  } else if (random() < 0.5) {
    const draw = random()
    const howMany = draw < 0.6 ? 1 : draw < 0.9 ? 2 : 3
    const flaky = random() < 0.125
    const patterns = [allEventTypes, ['letter.mailed', 'letter.address_rejected'], ['letter.printed', 'letter.mailed']]
    for (let endpoint = 1; endpoint <= howMany; endpoint++) {
      const events =
        endpoint === 1
          ? patterns[random() < 0.2 ? 0 : random() < 0.5 ? 1 : 2]!
          : pick([['letter.mailed'], ['letter.address_rejected', 'letter.cancelled', 'letter.failed']])
      endpoints.push({ endpoint, events, failRate: flaky && endpoint === 1 ? 0.05 : 0.003 })
    }
  }
  return { account, name, cards, envelopes, senders, campaigns, tinyCampaigns, singles, choices, endpoints }
}

/** The shape of a fill of `letters`, before it is made: what fillHistory writes and returns. */
export function historyShape(letters: number): HistoryShape {
  if (!Number.isSafeInteger(letters) || letters < 1) throw new RangeError(`a history holds at least one letter, got ${letters}`)
  const plans = planAccounts(letters)
  return {
    letters,
    accounts: plans.length,
    bigAccountLetters: Math.max(1, Math.round(letters * BIG_ACCOUNT_SHARE)),
    campaigns: plans.reduce((sum, plan) => sum + plan.campaigns + plan.tinyCampaigns, 0),
    webhookEndpoints: plans.reduce((sum, plan) => sum + plan.endpoints.length, 0),
    months: MONTHS,
  }
}
