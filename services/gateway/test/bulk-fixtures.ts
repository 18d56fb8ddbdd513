import type { publicApi } from '@letters/contracts'
import type { App } from '../src/app.js'
import { christmasCampaign } from '@letters/test/support/factories'
import { adminCampaign, spanishRecipient } from './helpers.js'

export type BulkAnswer = publicApi.BulkLettersCreated

/** The tests' Christmas campaign (christmasCampaign), `overrides` on top. */
export const bulkCampaign = (app: App, owner: Parameters<typeof adminCampaign>[1], overrides: Record<string, unknown> = {}) =>
  adminCampaign(app, owner, { ...christmasCampaign, ...overrides })

/** A valid recipient of that campaign, as a JSON bulk request lists it. */
export const bulkRecipient = (overrides: Record<string, unknown> = {}) => ({
  ...spanishRecipient,
  variables: { nombre: 'Lucía', cupon: 'NAV25' },
  ...overrides,
})
