import type { publicApi } from '@letters/contracts'
import type { App } from '../src/app.js'
import { adminCampaign, spanishRecipient } from './helpers.js'

export type BulkAnswer = publicApi.BulkLettersCreated

/** "¡Feliz Navidad, {{nombre}}! Usa {{cupon}} antes del 6 de enero." in dancing-script: nombre ≤ 10 characters defaulting to "amigo", cupon ≤ 8 without default. */
export const bulkCampaign = (app: App, owner: Parameters<typeof adminCampaign>[1], overrides: Record<string, unknown> = {}) =>
  adminCampaign(app, owner, {
    name: 'Navidad',
    fontName: 'dancing-script',
    message: '¡Feliz Navidad, {{nombre}}! Usa {{cupon}} antes del 6 de enero.',
    variables: [
      { name: 'nombre', maxSize: 10, defaultValue: 'amigo', example: 'Lucía' },
      { name: 'cupon', maxSize: 8, defaultValue: null, example: 'NAVIDAD' },
    ],
    ...overrides,
  })

/** A valid recipient of that campaign, as a JSON bulk request lists it. */
export const bulkRecipient = (overrides: Record<string, unknown> = {}) => ({
  ...spanishRecipient,
  variables: { nombre: 'Lucía', cupon: 'NAV25' },
  ...overrides,
})
