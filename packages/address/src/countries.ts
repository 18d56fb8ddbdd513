import countries from 'i18n-iso-countries'
import spanish from 'i18n-iso-countries/langs/es.json' with { type: 'json' }

countries.registerLocale(spanish)

/** The Spanish name of an ISO 3166-1 alpha-2 code ("DE" → "Alemania"), or '' for a code that is not assigned. */
export function spanishCountryName(code: string): string {
  return countries.getName(code, 'es') ?? ''
}
