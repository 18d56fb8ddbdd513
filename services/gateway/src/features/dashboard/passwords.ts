import { hash, verify } from '@node-rs/argon2'
import { ZxcvbnFactory } from '@zxcvbn-ts/core'
import * as common from '@zxcvbn-ts/language-common'
import * as spanish from '@zxcvbn-ts/language-es-es'

export const MIN_PASSWORD_LENGTH = 12

/**
 * zxcvbn-ts with its common-password list, its keyboard graphs and Spanish words and names: it
 * tells a password found in the leaked lists, made of a keyboard walk or of a word and a year
 * ("contraseña2024") from one chosen at random. Built once; a check takes milliseconds.
 */
const strength = new ZxcvbnFactory({
  dictionary: { ...common.dictionary, ...spanish.dictionary },
  graphs: common.adjacencyGraphs,
  // Bounds on the work: zxcvbn tries every l33t reading of every substring, which took 2 s of the
  // event loop for a 256-character password. Past 64 characters nothing more is looked at (such a
  // password is long enough), and a word is read with at most 4 l33t substitutions (p@$$w0rd).
  maxLength: 64,
  l33tMaxSubstitutions: 4,
})
const commonPasswords = new Set(common.dictionary['passwords-common'])

/**
 * Why a new password is refused, in Spanish, or null when it is good enough: at least 12
 * characters, not one of the common passwords, and not guessable from what zxcvbn finds in it
 * (a score under 3, such as a keyboard walk or a repeated word). The account's email and name
 * count as guessable parts of it.
 */
export function passwordProblem(password: string, userInputs: string[]): string | null {
  // Characters as people count them (code points), as the body's schema counts its maximum.
  if ([...password].length < MIN_PASSWORD_LENGTH) return `La contraseña debe tener al menos ${MIN_PASSWORD_LENGTH} caracteres`
  if (commonPasswords.has(password.toLowerCase())) return 'Esa contraseña está en la lista de las más usadas; elige otra'
  const parts = guessableParts(userInputs)
  if (madeOfDetails(password, parts)) return 'La contraseña no puede ser el nombre de la cuenta o tu correo con números o signos; añade palabras tuyas'
  const result = strength.check(password, parts)
  if (result.score < 3) return 'Esa contraseña es fácil de adivinar (palabras, fechas o teclas seguidas); prueba una frase de varias palabras sin relación'
  return null
}

/** Lower case, without accents or anything but letters and digits: "Papelería Luna" is "papelerialuna". */
const letters = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, '')

/**
 * What a person's own details give whoever guesses their password: each detail whole, and its
 * words alone and run together. zxcvbn matches its user inputs as words of the password, so an
 * account called "Papelería Luna" must also be "papeleria", "luna" and "papelerialuna" for
 * "PapeleriaLuna2024!" to be read as the name and a year.
 */
export function guessableParts(details: readonly string[]): string[] {
  const parts = new Set<string>()
  // An email's two halves are details of their own: "ana.gil" and "papelerialuna.es".
  for (const detail of details.flatMap((whole) => [whole, ...(whole.includes('@') ? whole.split('@') : [])])) {
    const words = detail
      .split(/[^\p{L}\p{N}]+/u)
      .map(letters)
      .filter((word) => word.length >= 2)
    for (const part of [detail.toLowerCase(), ...words, words.join('')]) if (part !== '') parts.add(part)
  }
  return [...parts]
}

/** Letters a password must hold besides the person's own details ("Acme Dashboard 2024" holds none). */
const OWN_LETTERS_MIN = 4

/** True when the password's letters are the person's details and little more: the name or the email with digits and signs around them. */
function madeOfDetails(password: string, parts: readonly string[]): boolean {
  const withoutDigits = (text: string) => letters(text).replace(/\p{N}+/gu, '')
  const own = withoutDigits(password)
  const longestFirst = parts
    .map(withoutDigits)
    .filter((part) => part.length >= 3)
    .sort((a, b) => b.length - a.length)
  const rest = longestFirst.reduce((left, part) => left.split(part).join(''), own)
  return rest !== own && rest.length < OWN_LETTERS_MIN
}

/** argon2id with the library's defaults (19 MiB, 2 passes, 1 lane): the minimum OWASP asks of it. */
export const hashPassword = (password: string) => hash(password)

/**
 * Whether `password` matches a stored hash. With no hash (an unknown email, a user who has not
 * followed the invitation), a dummy one is checked all the same, so that the time of the answer
 * does not tell which emails have a user.
 */
export async function passwordMatches(password: string, stored: string | null): Promise<boolean> {
  const target = stored ?? (await dummyHash)
  const matches = await verify(target, password).catch(() => false)
  return stored !== null && matches
}

const dummyHash = hash('la contraseña de nadie, solo para gastar el mismo tiempo')
