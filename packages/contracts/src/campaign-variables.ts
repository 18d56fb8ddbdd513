import { Type, type Static } from 'typebox'
import { strict } from './common.js'

/**
 * Variable names are what `{{name}}` placeholders refer to. `__proto__` is refused: a client's
 * JSON cannot carry that key (the body parser refuses it, as it should: it is how prototype
 * pollution gets in), so such a variable could never be filled. Other names of object properties
 * (`constructor`, `toString`) are ordinary names: the values are kept in a Map.
 */
export const VARIABLE_NAME_PATTERN = '^(?!__proto__$)[A-Za-z_][A-Za-z0-9_]{0,63}$'

/**
 * A campaign's variable: the one home of its shape, what the admin API takes when a campaign is
 * made and what both APIs show of it (GET /campaigns, the admin's campaign).
 */
export const CampaignVariable = Type.Object(
  {
    name: Type.String({
      pattern: VARIABLE_NAME_PATTERN,
      errorMessage: 'El nombre de una variable debe empezar por una letra o "_" y contener solo letras, dígitos y "_" (máximo 64); __proto__ está reservado',
    }),
    maxSize: Type.Integer({ minimum: 1, maximum: 1000 }),
    defaultValue: Type.Union([Type.String(), Type.Null()]),
    example: Type.String({ maxLength: 1000 }),
  },
  strict,
)
export type CampaignVariable = Static<typeof CampaignVariable>
