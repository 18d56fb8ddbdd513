// Plain values, without a schema: the process that reads a client's font imports this module
// alone, not the schemas of the whole contract (which took half of its start).

/** The file types an account's font is uploaded as: the body of PUT …/fonts/{name}/file, as is. */
export const fontContentTypes = ['font/ttf', 'font/otf', 'font/woff', 'font/woff2'] as const
export type FontContentType = (typeof fontContentTypes)[number]

/** The largest font file taken: a handwriting font with Latin coverage weighs 30–300 KB. */
export const FONT_MAX_BYTES = 5 * 1024 * 1024

/**
 * What every font an account uploads must write: the Spanish alphabet in both cases with its
 * accents, the digits and common punctuation. A letter in a font that lacks one would print an
 * empty box where the client typed it.
 */
export const fontRequiredCharacters = 'abcdefghijklmnñopqrstuvwxyzABCDEFGHIJKLMNÑOPQRSTUVWXYZáéíóúüÁÉÍÓÚÜ0123456789.,;:¿?¡!()-\'"«»/&@%º'
