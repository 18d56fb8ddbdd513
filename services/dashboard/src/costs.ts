/**
 * What one letter costs, by destination country, as the gateway charges it by default
 * (LETTER_COSTS=ES=3,*=5 in packages/config). No route tells a client its costs yet: when one
 * does, read them from there instead.
 */
const costByCountry: Record<string, number> = { ES: 3 }
const costOtherwise = 5

export const letterCost = (country: string) => costByCountry[country.toUpperCase()] ?? costOtherwise
