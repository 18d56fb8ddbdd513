/**
 * Where a letter's files are kept in the artifact store: its print files and its final proof,
 * `<letterId>/…`, so that erasing its personal data removes one folder.
 */
export const letterFolder = (letterId: string) => letterId

/** A file of a letter in the artifact store (`card.pdf`, a proof of one drawing revision). */
export const letterFileKey = (letterId: string, name: string) => `${letterFolder(letterId)}/${name}`
