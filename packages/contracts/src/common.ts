import { Type, type Static, type TSchema } from 'typebox'

/**
 * Every schema may carry `errorMessage`: the Spanish sentence a client gets when the value
 * breaks that schema, in place of the generic one built from the rule.
 */
export const Uuid = (errorMessage?: string) => Type.String({ format: 'uuid', ...(errorMessage ? { errorMessage } : {}) })

/**
 * A UUID in any case, as ids are written: for ids no schema checked (a path segment that names
 * nothing when it is not one, a BullMQ job's id), which must not reach a uuid column, where
 * Postgres would refuse them with an error instead of finding nothing.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Matches text with something visible in it: a character that is not white space, a control or
 * format character (zero-width space, joiners, BOM, soft hyphen…), another character that draws
 * nothing (Hangul fillers, variation selectors, the blank Braille pattern) or a combining mark,
 * which has nothing to sit on alone. A name of only such characters is blank, and refused.
 */
export const NON_BLANK = '[^\\s\\p{Cc}\\p{Cf}\\p{Z}\\p{M}\\p{Default_Ignorable_Code_Point}\\u2800]'

/** Object options for a request body: a field the route does not know is a 400, never dropped. */
export const strict = { additionalProperties: false } as const

/** Free text a person typed: never empty or blank, never a novel. */
export const Label = (maxLength = 200) => Type.String({ minLength: 1, maxLength, pattern: NON_BLANK })

export const ErrorResponse = Type.Object({
  error: Type.String(),
  message: Type.String(),
  requestId: Type.Optional(Type.String()),
  details: Type.Optional(
    Type.Array(
      Type.Object({
        field: Type.String({ description: "The field, parameter or header, as a client writes it (`recipients[0].zip`); '' for the body as a whole." }),
        message: Type.String({ description: 'What is wrong with it, in Spanish.' }),
      }),
      {
        description:
          'On a 400 for a request that breaks its schema: each problem on its own, the fields it does not allow first (at most 10; `message` counts the rest). `message` names them all.',
      },
    ),
  ),
})
export type ErrorResponse = Static<typeof ErrorResponse>

/** The response schemas of the error statuses a route can send, all `{ error, message }`. */
export function errorResponses<const S extends readonly number[]>(...statuses: S): Record<S[number], typeof ErrorResponse> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorResponse])) as Record<S[number], typeof ErrorResponse>
}

export const IdParams = Type.Object({ id: Uuid() })

/**
 * The query fields of a list read a page at a time: `limit` rows (default 20), after the `nextCursor` of the page before.
 * Like every integer of a query, `limit` is decimal digits: `0x5`, `1e1`, ` 1` or `true` are refused (the gateway's validation).
 */
export const pageQueryFields = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      description: 'Rows in the page, from 1 to 100 (default 20), in decimal digits.',
    }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
}

/** A page of a list: its rows, and the cursor of the next page (null on the last one). */
export const Page = <Row extends TSchema>(row: Row) => Type.Object({ data: Type.Array(row), nextCursor: Type.Union([Type.String(), Type.Null()]) })

/** The body of a route that takes none: nothing (Fastify passes null), or `{}`; any field is a 400. */
export const NoBody = Type.Union([Type.Null(), Type.Object({}, strict)], {
  errorMessage: 'Esta ruta no admite campos en el cuerpo: envíala sin cuerpo o con {}',
})

/** A key's, letter's or endpoint's mode: live (charged, printed) or test (`lk_test_` keys: never charged nor printed). */
export const Mode = Type.Union([Type.Literal('live'), Type.Literal('test')])
export type Mode = Static<typeof Mode>

/** The mode a `livemode` column stands for, as labels, lock names and the API name it. */
export const modeLabel = (livemode: boolean): Mode => (livemode ? 'live' : 'test')

export const NamedEntry = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() })
export type NamedEntry = Static<typeof NamedEntry>

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

/**
 * A letter's recipient as stored and shown: as the client sent it, the country upper-cased. The
 * one home of this shape (the database column, the API's letter, the address worker's input);
 * the rules a request's fields must meet are the request schemas' (public.ts).
 */
export const Recipient = Type.Object({
  name: Type.String(),
  surname: Type.String(),
  company: Nullable(Type.String()),
  address: Type.String(),
  zip: Type.String(),
  city: Type.String(),
  province: Nullable(Type.String()),
  country: Type.String(),
})
export type Recipient = Static<typeof Recipient>

/** A field of the recipient an address check may change. */
const RecipientField = Type.KeyOf(Recipient)

/**
 * The recipient as the address worker verified and normalized it (letters.address, shown as the
 * letter's `address`): the cleaned fields, the country's Spanish name for the envelope, whether
 * the post can deliver it, each change made and why, the problems that make it undeliverable,
 * and which verifier said so.
 */
export const VerifiedAddress = Type.Object({
  ...Recipient.properties,
  countryName: Type.String(),
  deliverability: Type.Union([Type.Literal('deliverable'), Type.Literal('corrected'), Type.Literal('undeliverable')]),
  changes: Type.Array(Type.Object({ field: RecipientField, from: Nullable(Type.String()), to: Nullable(Type.String()), reason: Type.String() })),
  problems: Type.Array(Type.String()),
  verifiedBy: Type.String(),
})
export type VerifiedAddress = Static<typeof VerifiedAddress>

/** One of the strings of a list (a format, a production), typed as the list's own values. */
export const Literals = <const T extends readonly string[]>(values: T, options: { errorMessage?: string; description?: string } = {}) =>
  Type.Enum([...values] as T[number][], options)

/** A stored file as the API shows it: its type, size, hash and version (each upload is a new version; letters keep the one they were accepted with). */
export const FileVersion = <Types extends readonly string[]>(contentTypes: Types) =>
  Type.Object({
    contentType: Literals(contentTypes),
    bytes: Type.Integer(),
    sha256: Type.String(),
    version: Type.Integer({ minimum: 1 }),
  })
