/** drizzle wraps driver errors; the SQLSTATE sits on the error or on its cause. */
export function sqlState(error: unknown): string | undefined {
  const candidate = error as { code?: unknown; cause?: { code?: unknown } }
  const code = candidate?.cause?.code ?? candidate?.code
  return typeof code === 'string' ? code : undefined
}

export const FOREIGN_KEY_VIOLATION = '23503'
export const UNIQUE_VIOLATION = '23505'
