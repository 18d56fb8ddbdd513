import { sql } from 'drizzle-orm'
import {
  artworkContentTypes,
  artworkUses,
  DEFAULT_CARD_FORMAT,
  DEFAULT_CARD_PRODUCTION,
  DEFAULT_ENVELOPE_FORMAT,
  DEFAULT_FONT,
  dashboardRoles,
  ledgerKinds,
  type LedgerKind,
  fontContentTypes,
  fontNames,
  cardFormatNames,
  erasableStatuses,
  cardProductions,
  envelopeFormatNames,
  inkColors,
  letterStatuses,
  qrScanKinds,
  returnReasons,
  type LetterStatus,
  type PrintSpec,
  type QrPlacement,
  type Recipient,
  type SignatureDrawing,
  type StoredReturnAddress,
  type VerifiedAddress,
} from '@letters/contracts'
import {
  bigint,
  bigserial,
  boolean,
  check,
  customType,
  foreignKey,
  type AnyPgColumn,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'
import { literalList } from './literals.js'
import { printBatchStatus, printBatchStatuses } from './print-batch-statuses.js'

/** Bytes, as postgres.js reads and writes them: a Buffer. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' })

const id = () => uuid('id').primaryKey().defaultRandom()
const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow()
const accountRef = () =>
  uuid('account_id')
    .notNull()
    .references(() => accounts.id)

export const accounts = pgTable(
  'accounts',
  {
    id: id(),
    name: text('name').notNull(),
    balance: integer('balance').notNull().default(0),
    createdAt: createdAt(),
  },
  (table) => [check('accounts_balance_non_negative', sql`${table.balance} >= 0`)],
)

export const apiKeys = pgTable(
  'api_keys',
  {
    id: id(),
    accountId: accountRef(),
    /** sha-256 of the key, hex; the key itself is shown once and never stored. */
    keyHash: text('key_hash').notNull(),
    /** The first characters of the key, so a person can tell keys apart. */
    displayPrefix: text('display_prefix').notNull(),
    /** False for a test key (`lk_test_`): its letters are never charged nor printed. */
    livemode: boolean('livemode').notNull().default(true),
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (table) => [uniqueIndex('api_keys_key_hash_unique').on(table.keyHash), index('api_keys_account_idx').on(table.accountId)],
)

/**
 * The people of an account who use the dashboard. One email signs in to one account. A user is
 * invited first (a token's hash and its expiry, no password), and sets a password by following
 * the invitation, which is then forgotten.
 */
export const dashboardUsers = pgTable(
  'dashboard_users',
  {
    id: id(),
    accountId: accountRef(),
    /** Lower-cased and trimmed, so that one address is one user however it is typed. */
    email: text('email').notNull(),
    role: text('role', { enum: dashboardRoles }).notNull(),
    /** argon2id, in its PHC string; null until the invitation is followed. */
    passwordHash: text('password_hash'),
    /** sha-256 of the invitation's token, hex; null once it is followed. */
    invitationHash: text('invitation_hash'),
    invitationExpiresAt: timestamp('invitation_expires_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex('dashboard_users_email_unique').on(table.email),
    uniqueIndex('dashboard_users_invitation_unique').on(table.invitationHash),
    index('dashboard_users_account_idx').on(table.accountId, table.createdAt),
    check('dashboard_users_known_role', sql.raw(`role IN (${literalList(dashboardRoles)})`)),
    // The unique index holds one user per address only if every address is stored one way.
    check('dashboard_users_email_normalized', sql`${table.email} = lower(btrim(${table.email}))`),
  ],
)

/**
 * A signed-in browser. The cookie holds a random token; only its hash is stored. The session
 * keeps the role it was opened with: once its user has another role (or is removed, which
 * deletes the row), it has ended. `lastSeenAt` is moved at most once a minute.
 */
export const dashboardSessions = pgTable(
  'dashboard_sessions',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => dashboardUsers.id, { onDelete: 'cascade' }),
    role: text('role', { enum: dashboardRoles }).notNull(),
    /** The double-submit token: the page reads it from its cookie and sends it back as X-CSRF-Token. */
    csrfToken: text('csrf_token').notNull(),
    createdAt: createdAt(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    index('dashboard_sessions_user_idx').on(table.userId),
    index('dashboard_sessions_last_seen_idx').on(table.lastSeenAt),
    check('dashboard_sessions_known_role', sql.raw(`role IN (${literalList(dashboardRoles)})`)),
  ],
)

/** Card designs, envelope designs, senders and signatures share one shape: an account's named entry, and what each kind adds. */
const namedEntry = () => ({ id: id(), accountId: accountRef(), name: text('name').notNull(), createdAt: createdAt() })
const byAccount = (name: string) => (table: { accountId: AnyPgColumn; createdAt: AnyPgColumn }) => [
  index(`${name}_account_idx`).on(table.accountId, table.createdAt),
]

/** A card is a product: its size, whether the floor prints its front or loads it preprinted, and the stock it loads. */
export const cardDesigns = pgTable(
  'card_designs',
  {
    ...namedEntry(),
    format: text('format', { enum: cardFormatNames }).notNull().default(DEFAULT_CARD_FORMAT),
    production: text('production', { enum: cardProductions }).notNull().default(DEFAULT_CARD_PRODUCTION),
    /** The code of the stock the floor loads; required for `preprinted` (the API refuses one without it). */
    stockCode: text('stock_code'),
    /** Where a letter with a tracking URL prints its QR code; null: the bottom right of the handwriting (DEFAULT_QR_PLACEMENT). */
    qrPlacement: jsonb('qr_placement').$type<QrPlacement>(),
  },
  byAccount('card_designs'),
)
export const envelopeDesigns = pgTable(
  'envelope_designs',
  {
    ...namedEntry(),
    format: text('format', { enum: envelopeFormatNames }).notNull().default(DEFAULT_ENVELOPE_FORMAT),
    stockCode: text('stock_code'),
    /** `#RRGGBB`, for proofs: kraft is not white. */
    paperColor: text('paper_color'),
  },
  byAccount('envelope_designs'),
)
export const senders = pgTable(
  'senders',
  {
    ...namedEntry(),
    /** Printed small in the envelope's corner; normalized by the recipients' rules when saved. */
    returnAddress: jsonb('return_address').$type<StoredReturnAddress>(),
  },
  byAccount('senders'),
)
export const signatures = pgTable('signatures', namedEntry(), byAccount('signatures'))

/**
 * Every version of every artwork: a card's front, an envelope's logo, a signature's drawing. A
 * row is never changed: an upload adds the next version, and a letter names the version it was
 * accepted with (letters.print_spec), so a reprint draws the same bytes.
 */
export const artworks = pgTable(
  'artworks',
  {
    /** The card design, envelope design or signature it belongs to. */
    ownerId: uuid('owner_id').notNull(),
    version: integer('version').notNull(),
    accountId: accountRef(),
    use: text('use', { enum: artworkUses }).notNull(),
    /** The design's format it was checked against and made for; null for a signature. A design whose format changes prints none of it. */
    format: text('format'),
    contentType: text('content_type', { enum: artworkContentTypes }).notNull(),
    bytes: integer('bytes').notNull(),
    sha256: text('sha256').notNull(),
    /** The file as uploaded. */
    original: bytea('original').notNull(),
    /** What the renderer draws: made once at upload (@letters/artwork). */
    print: bytea('print').notNull(),
    /** A PNG at most 1,000 px wide, for people choosing a design. */
    preview: bytea('preview').notNull(),
    /** A signature's drawing as the renderer takes it. */
    drawing: jsonb('drawing').$type<SignatureDrawing>(),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.ownerId, table.version] }), check('artworks_version_positive', sql`${table.version} > 0`)],
)

/**
 * An account's own handwriting font: `name` is what its requests send as `fontName` (never a
 * built-in hand's), `family` what people read. On the plotter, where an outline cannot be drawn
 * with a pen, its letters are written in the built-in single-stroke hand `plotter_font` names.
 */
export const accountFonts = pgTable(
  'account_fonts',
  {
    id: id(),
    accountId: accountRef(),
    name: text('name').notNull(),
    family: text('family').notNull(),
    plotterFont: text('plotter_font', { enum: fontNames }).notNull().default(DEFAULT_FONT),
    createdAt: createdAt(),
  },
  (table) => [uniqueIndex('account_fonts_account_name_unique').on(table.accountId, table.name)],
)

/**
 * Every version of an account font's file. As with artwork, a row is never changed: an upload
 * adds the next version, and a letter keeps the version it was accepted with.
 */
export const accountFontFiles = pgTable(
  'account_font_files',
  {
    fontId: uuid('font_id')
      .notNull()
      .references(() => accountFonts.id),
    version: integer('version').notNull(),
    contentType: text('content_type', { enum: fontContentTypes }).notNull(),
    bytes: integer('bytes').notNull(),
    sha256: text('sha256').notNull(),
    /** The file as uploaded. */
    original: bytea('original').notNull(),
    /** The font as the renderer parses it (a WOFF unwrapped): made once at upload (@letters/artwork). */
    face: bytea('face').notNull(),
    /** A PNG at most 1,000 px wide of a sample sentence in the font. */
    preview: bytea('preview').notNull(),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.fontId, table.version] }), check('account_font_files_version_positive', sql`${table.version} > 0`)],
)

/** The card design, envelope design and sender a campaign or a letter is made with. */
const designRefs = () => ({
  cardDesignId: uuid('card_design_id')
    .notNull()
    .references(() => cardDesigns.id),
  envelopeDesignId: uuid('envelope_design_id')
    .notNull()
    .references(() => envelopeDesigns.id),
  senderId: uuid('sender_id')
    .notNull()
    .references(() => senders.id),
  /** Drawn under the message; null: the card is signed with the sender's name. */
  signatureId: uuid('signature_id').references(() => signatures.id),
})

export const campaigns = pgTable(
  'campaigns',
  {
    id: id(),
    accountId: accountRef(),
    name: text('name').notNull(),
    active: boolean('active').notNull().default(true),
    ...designRefs(),
    fontName: text('font_name'),
    /** The ink of its letters unless a request says otherwise; null: blue. */
    inkColor: text('ink_color', { enum: inkColors }),
    /** A template with `{{variable}}` placeholders, each a declared variable. */
    message: text('message').notNull(),
    /** Its letters' QR code destination, a template like the message (values URL-encoded); null: none. */
    trackingUrl: text('tracking_url'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('campaigns_account_idx').on(table.accountId, table.createdAt), knownInk('campaigns_ink_color_known')],
)

export const campaignVariables = pgTable(
  'campaign_variables',
  {
    campaignId: uuid('campaign_id')
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    name: text('name').notNull(),
    maxSize: integer('max_size').notNull(),
    defaultValue: text('default_value'),
    example: text('example').notNull(),
  },
  (table) => [primaryKey({ columns: [table.campaignId, table.name] }), check('campaign_variables_max_size_positive', sql`${table.maxSize} > 0`)],
)

export { letterStatuses, type LetterStatus }

export type { Recipient }

/**
 * A letter in an erasable status that still holds its personal data: the predicate of the
 * erasure's partial indexes, in literals (a partial index needs them, and a query needs the same
 * text for the planner to use one). The columns are unqualified: for a query on `letters` alone.
 */
export const stillErasable = sql.raw(`personal_data_erased_at IS NULL AND status IN (${literalList(erasableStatuses)})`)

/** The database refuses an ink outside the one list, whoever writes it. */
function knownInk(name: string) {
  return check(name, sql.raw(`ink_color IN (${literalList(inkColors)})`))
}

/** The database refuses a status outside the one list, whoever writes it. */
const knownStatus = (name: string) => check(name, sql.raw(`status IN (${literalList(letterStatuses)})`))

export const letters = pgTable(
  'letters',
  {
    id: id(),
    accountId: accountRef(),
    type: text('type', { enum: ['single', 'campaign'] }).notNull(),
    campaignId: uuid('campaign_id').references(() => campaigns.id),
    ...designRefs(),
    fontName: text('font_name').notNull(),
    /** For a letter in an account's own font: the font and the version of its file it was accepted with; null for a built-in hand. */
    fontId: uuid('font_id'),
    fontVersion: integer('font_version'),
    message: text('message').notNull(),
    recipient: jsonb('recipient').$type<Recipient>().notNull(),
    /** The normalized address, null until the address worker has seen the letter. */
    address: jsonb('address').$type<VerifiedAddress>(),
    /** The recipient block exactly as printed, set with `address`; null before, and on letters verified before it was kept. */
    addressLines: jsonb('address_lines').$type<string[]>(),
    /** The designs, artwork versions, signature and return address the letter was accepted with (`letter_print_spec`); null on letters older than designs with a product. */
    printSpec: jsonb('print_spec').$type<PrintSpec>(),
    /**
     * The drawing the letter was accepted with (@letters/render's DRAWING_REVISION then), which
     * every file of it is drawn with: 4 for letters accepted before each glyph had a shape of its
     * own, and for a row an earlier release writes during an upgrade.
     */
    drawing: integer('drawing').notNull().default(4),
    /** The ink it is written in; black for letters of drawing 4, which were drawn in black. */
    inkColor: text('ink_color', { enum: inkColors }).notNull().default('black'),
    status: text('status', { enum: letterStatuses }).notNull(),
    /** What the letter costs; a test letter (`livemode` false) shows it but was never charged. */
    cost: integer('cost').notNull(),
    /** False: made with a test key; seen only by test keys, never charged, never handed to the floor. */
    livemode: boolean('livemode').notNull().default(true),
    /** When a `scheduled` letter enters the pipeline; null for a letter sent at once. */
    sendAt: timestamp('send_at', { withTimezone: true }),
    /**
     * The floor's fencing token: each claim for printing takes the next number, and only the
     * job holding the current one may hand files over or mark the letter printed.
     */
    printClaim: integer('print_claim').notNull().default(0),
    /**
     * When the recipient (all but its country), the message and the address check were erased
     * (PERSONAL_DATA_RETENTION_MS after the letter became erasable, or on request); null until then.
     * From then on the letter never goes back to a status that needs them.
     */
    personalDataErasedAt: timestamp('personal_data_erased_at', { withTimezone: true }),
    /** When the letter's files (print files, kept proofs) left the artifact store, after its erasure committed; null until then. */
    artifactsRemovedAt: timestamp('artifacts_removed_at', { withTimezone: true }),
    /**
     * Of a letter erased while in the post's hands (`mailed`): its address as the suppression list
     * keeps one, the key (a hash of street, postal code and country for its account, no street)
     * and the postal code, so that its return still puts the address on the list. Null otherwise.
     */
    returnAddressKey: text('return_address_key'),
    returnZip: text('return_zip'),
    /**
     * The letter's short code for people and scanners (envelope, manifest, the floor's scanner):
     * 10 characters of Crockford's base32, 50 bits of the md5 of the id, computed by Postgres
     * (`letter_code`, migration 0004) for every row, so no writer can forget it or get it wrong.
     */
    code: text('code')
      .notNull()
      .generatedAlwaysAs(sql`letter_code(id)`),
    /** Where its QR code sends whoever scans it (the client's URL, not personal data: kept after erasure); null: no QR code. */
    trackingUrl: text('tracking_url'),
    /** The QR code's short link, `/q/{trackingCode}`: random, unrelated to the id; set exactly when trackingUrl is. */
    trackingCode: text('tracking_code'),
    /** Counted scans of its QR code, and the first and last of them. */
    qrScans: integer('qr_scans').notNull().default(0),
    firstScannedAt: timestamp('first_scanned_at', { withTimezone: true }),
    lastScannedAt: timestamp('last_scanned_at', { withTimezone: true }),
    /** When the post brought it back, and why (status `returned`); null otherwise. */
    returnedAt: timestamp('returned_at', { withTimezone: true }),
    returnReason: text('return_reason', { enum: returnReasons }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    // A key's lists: one account's letters of one mode, newest first.
    index('letters_account_mode_created_idx').on(table.accountId, table.livemode, table.createdAt.desc(), table.id.desc()),
    // The operator's list of every account's letters (GET /admin/cards without an account), newest first.
    index('letters_created_idx').on(table.createdAt.desc(), table.id.desc()),
    // The clock's scans: scheduled letters by send date, test letters waiting to be "mailed".
    index('letters_scheduled_idx')
      .on(table.sendAt)
      .where(sql`status = 'scheduled'`),
    index('letters_test_printed_idx')
      .on(table.updatedAt)
      .where(sql`status = 'printed' AND NOT livemode`),
    // The reconciler's scan: letters still in the pipeline, oldest change first.
    index('letters_status_updated_idx').on(table.status, table.updatedAt),
    check('letters_cost_positive', sql`${table.cost} > 0`),
    knownStatus('letters_status_known'),
    knownInk('letters_ink_color_known'),
    // A letter in an account font names a version of its file that exists, or none at all.
    foreignKey({
      name: 'letters_font_version_fk',
      columns: [table.fontId, table.fontVersion],
      foreignColumns: [accountFontFiles.fontId, accountFontFiles.version],
    }),
    check('letters_font_both_or_neither', sql`(${table.fontId} IS NULL) = (${table.fontVersion} IS NULL)`),
    uniqueIndex('letters_code_unique').on(table.code),
    uniqueIndex('letters_tracking_code_unique')
      .on(table.trackingCode)
      .where(sql`tracking_code IS NOT NULL`),
    check('letters_tracking_both_or_neither', sql`(${table.trackingUrl} IS NULL) = (${table.trackingCode} IS NULL)`),
    check('letters_return_reason_known', sql.raw(`return_reason IN (${literalList(returnReasons)})`)),
    // A campaign's scans and returns are counted over its letters (letters_campaign_created_idx).
    // The erasure's scans, over letters still holding personal data in a status that no longer
    // needs it (erasableStatuses): by age for the retention, by account for ops. Erased letters
    // leave them, so they stay as small as the retention period.
    index('letters_erasable_updated_idx').on(table.updatedAt).where(stillErasable),
    index('letters_erasable_account_idx').on(table.accountId).where(stillErasable),
    // Erased letters whose files are still to be removed from the artifact store.
    index('letters_artifacts_pending_idx')
      .on(table.personalDataErasedAt)
      .where(sql`personal_data_erased_at IS NOT NULL AND artifacts_removed_at IS NULL`),
    // A key's list of one campaign's letters, newest first: a campaign of a few letters in an
    // account of many is read by its own entries, not by the account's.
    index('letters_campaign_created_idx')
      .on(table.accountId, table.livemode, table.campaignId, table.createdAt.desc(), table.id.desc())
      .where(sql`campaign_id IS NOT NULL`),
    // The floor's counts: only letters still on their way (a status with a move out of it, per
    // @letters/letters' transition table), so they do not grow with every letter ever mailed.
    index('letters_in_flight_idx')
      .on(table.livemode, table.status)
      .where(sql`status IN ('scheduled', 'received', 'ready_for_print', 'printing', 'printed', 'failed')`),
    // The floor's count of letters to look at (the resumable statuses and failed), read from the
    // index alone; their lists read letters_status_updated_idx in order.
    index('letters_needs_look_idx')
      .on(table.livemode, table.status, table.updatedAt)
      .where(sql`status IN ('received', 'ready_for_print', 'printing', 'failed')`),
  ],
)

/**
 * Each request for a letter's QR link, kept as its time and what it was taken for (a scan, or a
 * preview bot, a prefetch, a scan past the per-minute limit): never who made it (no address, no
 * user agent).
 */
export const qrScans = pgTable(
  'qr_scans',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    letterId: uuid('letter_id')
      .notNull()
      .references(() => letters.id),
    kind: text('kind', { enum: qrScanKinds }).notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('qr_scans_letter_idx').on(table.letterId, table.at), check('qr_scans_kind_known', sql.raw(`kind IN (${literalList(qrScanKinds)})`))],
)

/**
 * An account's addresses the post brought a letter back from: a hash of the address (street line,
 * postal code, country, normalized: suppressionHash), never a name or the street itself, so an
 * entry outlives its letter's erasure. A new letter to such an address is refused unless the
 * request says `ignoreSuppression`. Test letters have their own list.
 */
export const addressSuppressions = pgTable(
  'address_suppressions',
  {
    id: id(),
    accountId: accountRef(),
    livemode: boolean('livemode').notNull(),
    addressHash: text('address_hash').notNull(),
    reason: text('reason', { enum: returnReasons }).notNull(),
    zip: text('zip').notNull(),
    country: text('country').notNull(),
    /** The letter that came back (its personal data may be erased since: the entry names none). */
    letterId: uuid('letter_id').references(() => letters.id),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex('address_suppressions_address_unique').on(table.accountId, table.livemode, table.addressHash),
    index('address_suppressions_account_idx').on(table.accountId, table.livemode, table.createdAt.desc(), table.id.desc()),
    check('address_suppressions_reason_known', sql.raw(`reason IN (${literalList(returnReasons)})`)),
  ],
)

export const letterEvents = pgTable(
  'letter_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    letterId: uuid('letter_id')
      .notNull()
      .references(() => letters.id),
    status: text('status', { enum: letterStatuses }).notNull(),
    detail: text('detail'),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('letter_events_letter_idx').on(table.letterId, table.id), knownStatus('letter_events_status_known')],
)

/**
 * Each print file the printer accepted, recorded as soon as it did: a retry of the letter hands
 * over only the files not recorded here, so a file reaches the printer once.
 */
export const printHandoffs = pgTable(
  'print_handoffs',
  {
    letterId: uuid('letter_id')
      .notNull()
      .references(() => letters.id),
    /** The file's name on the floor, e.g. `<letterId>.card.pdf`. */
    file: text('file').notNull(),
    /** The claim under which it was handed over. */
    claim: integer('claim').notNull(),
    printer: text('printer').notNull(),
    handedAt: timestamp('handed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.letterId, table.file] })],
)

/** PRINTER=batch: a tray of letters printed together, in one of printBatchStatuses. */
export const printBatches = pgTable(
  'print_batches',
  {
    id: id(),
    status: text('status', { enum: printBatchStatuses }).notNull().default(printBatchStatus.open),
    openedAt: timestamp('opened_at', { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
    handedAt: timestamp('handed_at', { withTimezone: true }),
    letterCount: integer('letter_count').notNull().default(0),
    /** The card stock and the envelope stock the floor loads for this batch (stockOf in contracts); '' for letters printed before designs had stock. */
    cardStock: text('card_stock').notNull().default(''),
    envelopeStock: text('envelope_stock').notNull().default(''),
    /** The ink of every letter in it: the pen a plotter is loaded with. Black for batches opened before inks (and by an earlier release). */
    inkColor: text('ink_color', { enum: inkColors }).notNull().default('black'),
    /**
     * Until when the closer finishing this batch holds it, renewed while it works. Committed, so it
     * outlives the closer's connection: a closer whose connection dropped while the printer had a
     * file keeps the batch until it has recorded that file, and one that died lets go when this passes.
     */
    closerLeaseUntil: timestamp('closer_lease_until', { withTimezone: true }),
    /** Which closer holds that lease: only its holder renews or releases it. */
    closerLeaseId: uuid('closer_lease_id'),
    /** When the batch's files left the artifact store: once every letter in it was erased. */
    artifactsRemovedAt: timestamp('artifacts_removed_at', { withTimezone: true }),
  },
  (table) => [
    // One tray at a time per pair of stocks and ink: every worker adds to the same one.
    uniqueIndex('print_batches_one_open_per_stock_and_ink')
      .on(table.cardStock, table.envelopeStock, table.inkColor)
      .where(sql.raw(`status = '${printBatchStatus.open}'`)),
    knownInk('print_batches_ink_color_known'),
    index('print_batches_status_idx').on(table.status, table.openedAt),
    // The floor's recent batches, the last closed first: the first few in index order, not every batch sorted.
    index('print_batches_recent_idx')
      .on(sql`${table.closedAt} DESC NULLS LAST`, table.id)
      .where(sql.raw(`status <> '${printBatchStatus.open}'`)),
    // The eraser's look, a bounded stretch each round in id order, for handed batches whose letters
    // are all erased but whose files are still there (their removal failed, or never ran).
    index('print_batches_artifacts_pending_idx')
      .on(table.id)
      .where(sql.raw(`status = '${printBatchStatus.handed}' AND artifacts_removed_at IS NULL`)),
  ],
)

/** A letter in its batch: one batch per letter, ever. */
export const printBatchLetters = pgTable(
  'print_batch_letters',
  {
    batchId: uuid('batch_id')
      .notNull()
      .references(() => printBatches.id),
    letterId: uuid('letter_id')
      .notNull()
      .references(() => letters.id),
    /** Its place in the presorted order of the batch's files, from 1; set when the batch closes. */
    sequence: integer('sequence'),
    addedAt: timestamp('added_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.letterId] }),
    index('print_batch_letters_batch_idx').on(table.batchId),
    uniqueIndex('print_batch_letters_sequence_unique').on(table.batchId, table.sequence),
  ],
)

/** Each file of a batch the printer accepted, as print_handoffs for a letter's files: a retry hands over only the others. */
export const printBatchHandoffs = pgTable(
  'print_batch_handoffs',
  {
    batchId: uuid('batch_id')
      .notNull()
      .references(() => printBatches.id),
    /** The file's name on the floor, e.g. `batch-<batchId>.cards.pdf`. */
    file: text('file').notNull(),
    printer: text('printer').notNull(),
    handedAt: timestamp('handed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.batchId, table.file] })],
)

export { ledgerKinds, type LedgerKind }

/** Append-only. An account's balance always equals the sum of its entries' amounts. */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: accountRef(),
    kind: text('kind', { enum: ledgerKinds }).notNull(),
    /** Signed: a charge is negative, a refund or top-up positive. */
    amount: integer('amount').notNull(),
    balanceAfter: integer('balance_after').notNull(),
    letterId: uuid('letter_id').references(() => letters.id),
    reason: text('reason'),
    createdAt: createdAt(),
  },
  (table) => [
    index('ledger_entries_account_idx').on(table.accountId, table.id),
    // A letter is paid for once and refunded at most once, whatever retries happen.
    uniqueIndex('ledger_entries_one_charge_per_letter')
      .on(table.letterId)
      .where(sql`kind = 'charge'`),
    uniqueIndex('ledger_entries_one_refund_per_letter')
      .on(table.letterId)
      .where(sql`kind = 'refund'`),
    check('ledger_entries_amount_not_zero', sql`${table.amount} <> 0`),
    check('ledger_entries_balance_after_non_negative', sql`${table.balanceAfter} >= 0`),
  ],
)

/** Jobs to hand to BullMQ, written in the same transaction as the change that starts them. */
export const outbox = pgTable(
  'outbox',
  {
    /** Also the BullMQ jobId. */
    id: id(),
    queue: text('queue').notNull(),
    jobName: text('job_name').notNull(),
    /** A job's data (JobPayloads in packages/contracts): written by `enqueue`, which types it by the job's name. */
    payload: jsonb('payload').$type<Record<string, string>>().notNull(),
    createdAt: createdAt(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    attempts: integer('attempts').notNull().default(0),
  },
  (table) => [
    index('outbox_pending_idx')
      .on(table.createdAt)
      .where(sql`sent_at IS NULL`),
    // The reconciler finds a letter's latest job by the letter's id.
    index('outbox_letter_idx').on(sql`(${table.payload} ->> 'letterId')`, table.queue, table.createdAt),
    // The history retention's trim of rows done long ago, oldest first.
    index('outbox_sent_idx')
      .on(table.sentAt)
      .where(sql`sent_at IS NOT NULL`),
  ],
)

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    accountId: accountRef(),
    /** Test and live keys of one account have separate namespaces: a key reused across modes is two requests. */
    livemode: boolean('livemode').notNull().default(true),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.accountId, table.livemode, table.key] }), index('idempotency_keys_expires_idx').on(table.expiresAt)],
)

/** A client's webhook endpoint. The secret is kept to sign with; it is shown to the client once, at creation. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: id(),
    accountId: accountRef(),
    url: text('url').notNull(),
    /** The event types it receives. */
    events: text('events').array().notNull(),
    /** `whsec_` + base64 of 32 random bytes, as the client got it. */
    secret: text('secret').notNull(),
    /** Registered with a test key: receives test letters' events only; a live endpoint only live ones. */
    livemode: boolean('livemode').notNull().default(true),
    /** Set once its last 50 events all failed: it gets nothing more. */
    disabled: boolean('disabled').notNull().default(false),
    createdAt: createdAt(),
    /**
     * Set when the client deleted it (it is disabled too): gone from the API at once, its
     * events and attempts removed afterwards in batches by the history retention, then the row.
     */
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (table) => [index('webhook_endpoints_account_idx').on(table.accountId, table.livemode, table.createdAt)],
)

export const webhookEventStates = ['pending', 'delivered', 'failed', 'dropped'] as const
export type WebhookEventState = (typeof webhookEventStates)[number]

/**
 * One event for one endpoint, written in the transaction of the change it tells of. Its id is
 * the `webhook-id` header and the BullMQ job id; its body is fixed when written, so every retry
 * sends (and signs) the same bytes.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: id(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    body: text('body').notNull(),
    state: text('state', { enum: webhookEventStates }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    /** When its next attempt is due; null: due since it was written (its first attempt). */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    /**
     * While in the future, the event holds one of its endpoint's WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT
     * slots: admitted (its job queued) or being sent. A worker that died lets go when it passes.
     */
    leasedUntil: timestamp('leased_until', { withTimezone: true }),
    /** The job the lease was given to (its BullMQ job id): a job that lost its lease finds another one here and sends nothing. */
    leaseId: uuid('lease_id'),
  },
  (table) => [
    // An endpoint's events, finished last first: its state rides along, so the check of its
    // last finished events (all failed: disable it) reads the index alone, however long its history.
    index('webhook_events_endpoint_state_idx').on(table.endpointId, table.finishedAt, table.state),
    // The history retention's trim of deliveries finished long ago, oldest first.
    index('webhook_events_finished_idx')
      .on(table.finishedAt)
      .where(sql`state <> 'pending'`),
    // Admission: each endpoint's pending events, the one due longest ago first, and the few holding a slot.
    index('webhook_events_due_idx')
      .on(table.endpointId, sql`coalesce(${table.nextAttemptAt}, ${table.createdAt})`, table.id)
      .where(sql`state = 'pending'`),
    index('webhook_events_leased_idx')
      .on(table.endpointId, table.leasedUntil)
      .where(sql`state = 'pending' AND leased_until IS NOT NULL`),
    // A letter's events, by the id in their body: erasing its personal data rewrites each of them.
    index('webhook_events_letter_idx').on(sql`((${table.body}::json -> 'data') ->> 'id')`),
  ],
)

/**
 * The account's events, one per status change of a letter, whether or not it has endpoints: GET
 * /events lists them for EVENT_RETENTION_DAYS. The body is the one each subscribed endpoint's
 * copy in webhook_events carries, its own id included.
 */
export const events = pgTable(
  'events',
  {
    /** Set by the statement that writes the event, which puts it in the body too. */
    id: uuid('id').primaryKey(),
    accountId: accountRef(),
    livemode: boolean('livemode').notNull(),
    letterId: uuid('letter_id')
      .notNull()
      .references(() => letters.id),
    type: text('type').notNull(),
    /** Its place among its letter's events: 1, 2, 3… in the order of the letter's changes of status. */
    sequence: integer('sequence').notNull(),
    /** When the letter changed status (its letter_events row's `at`). */
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    body: text('body').notNull(),
  },
  (table) => [
    index('events_account_idx').on(table.accountId, table.livemode, table.occurredAt.desc(), table.id.desc()),
    index('events_account_type_idx').on(table.accountId, table.livemode, table.type, table.occurredAt.desc(), table.id.desc()),
    index('events_letter_idx').on(table.letterId, table.sequence),
    // The retention's deletes, oldest first.
    index('events_occurred_idx').on(table.occurredAt),
  ],
)

/** Every delivery attempt, as GET /webhooks/{id}/deliveries shows them. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    statusCode: integer('status_code'),
    /** `timeout`, `connection` or `refused_address` when no HTTP status came back. */
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    outcome: text('outcome', { enum: ['delivered', 'retrying', 'failed'] }).notNull(),
  },
  (table) => [
    index('webhook_attempts_endpoint_idx').on(table.endpointId, table.id.desc()),
    // Deleting an endpoint's events cascades here: without it, one scan of the table per event.
    index('webhook_attempts_event_idx').on(table.eventId),
  ],
)

/**
 * One row: the oldest migration a process may have been written against and still run on this
 * schema. An expanding migration leaves it; one that drops what an older release used raises it,
 * so that a process of that release refuses to start instead of failing on the missing column.
 */
export const schemaCompatibility = pgTable(
  'schema_compatibility',
  {
    singleton: boolean('singleton').primaryKey().default(true),
    oldestCodeMigration: text('oldest_code_migration').notNull(),
  },
  (table) => [check('schema_compatibility_one_row', sql`${table.singleton}`)],
)

/**
 * One row: a count every reconciler round raises, and copies to the artifact store after it
 * commits. The store's copy can only be ahead of this one when the database went back in time
 * (restored from a backup, or a replica promoted that had not caught up).
 */
export const restoreWatermark = pgTable(
  'restore_watermark',
  {
    singleton: boolean('singleton').primaryKey().default(true),
    counter: bigint('counter', { mode: 'number' }).notNull(),
  },
  (table) => [check('restore_watermark_one_row', sql`${table.singleton}`)],
)

/**
 * Each time the database was found restored (the watermark behind the artifact store's copy, or
 * ops said so with `letters reconcile`). A letter waiting for a job since before the latest one
 * not yet reconciled counts as stuck at once: its job may have been lost with the restore.
 */
export const databaseRestores = pgTable('database_restores', {
  id: uuid('id').primaryKey().defaultRandom(),
  detectedAt: timestamp('detected_at', { withTimezone: true }).notNull().defaultNow(),
  /** When a reconciliation over every letter left waiting by it finished. */
  reconciledAt: timestamp('reconciled_at', { withTimezone: true }),
  /** `watermark` (found by the reconciler) or `ops` (`letters reconcile`). */
  source: text('source', { enum: ['watermark', 'ops'] }).notNull(),
  databaseCounter: bigint('database_counter', { mode: 'number' }),
  journalCounter: bigint('journal_counter', { mode: 'number' }),
})
