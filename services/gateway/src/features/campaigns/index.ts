/** What a letter takes from its campaign: the campaign's defaults, its message filled, its tracking link. */
export { fillTrackingUrl, loadCampaign, type CampaignForLetter } from './campaigns.js'
export { characterCount, fillTemplate } from './templates.js'
