import { describe, expect, it } from 'vitest'
import { safeError, withoutQueryParameters } from '../src/log.js'

describe('safeError', () => {
  it('cuts the parameters out of a failed query and drops fields that quote rows', () => {
    const cause = Object.assign(new Error('new row for relation "letters" violates check constraint "x"'), {
      code: '23514',
      constraint_name: 'x',
      detail: 'Failing row contains (Lucía, Calle Mayor 1)',
      where: 'SQL function',
      parameters: ['Lucía', 'Calle Mayor 1'],
    })
    const error = Object.assign(new Error('Failed query: INSERT INTO letters VALUES ($1, $2)\nparams: Lucía,Calle Mayor 1', { cause }), {
      params: ['Lucía', 'Calle Mayor 1'],
    })
    const safe = safeError(error)
    expect(JSON.stringify(safe)).not.toMatch(/Lucía|Calle Mayor/)
    expect(safe).toMatchObject({
      type: 'Error',
      message: 'Failed query: INSERT INTO letters VALUES ($1, $2)\nparams: [redacted]',
      stack: expect.stringMatching(/^Error: Failed query: INSERT INTO letters VALUES \(\$1, \$2\)\nparams: \[redacted\]\n\s+at /),
      cause: { code: '23514', constraint_name: 'x', message: 'new row for relation "letters" violates check constraint "x"' },
    })
  })

  it('passes values that are not errors through, and stops at a cause cycle', () => {
    expect(safeError('texto')).toBe('texto')
    const error = new Error('a') as Error & { cause?: unknown }
    error.cause = error
    expect(JSON.stringify(safeError(error))).toContain('"message":"a"')
  })
})

describe('withoutQueryParameters', () => {
  it('rewrites a failed query’s message and stack in place, keeping the error’s class', () => {
    class Unrecoverable extends Error {
      override name = 'UnrecoverableError'
    }
    const error = Object.assign(new Unrecoverable('Failed query: UPDATE letters SET address = $1\nparams: {"street":"Calle Mayor 1"}'), { params: ['x'] })
    expect(withoutQueryParameters(error)).toBe(error)
    expect(error).toBeInstanceOf(Unrecoverable)
    expect(error.message).toBe('Failed query: UPDATE letters SET address = $1\nparams: [redacted]')
    expect(error.stack).toMatch(/^UnrecoverableError: Failed query: UPDATE letters SET address = \$1\nparams: \[redacted\]\n\s+at /)
    expect(JSON.stringify({ ...error, stack: error.stack })).not.toContain('Calle Mayor')
  })

  it('leaves other errors and values as they are', () => {
    const plain = new Error('la impresora no responde')
    const stack = plain.stack
    expect(withoutQueryParameters(plain).stack).toBe(stack)
    expect(withoutQueryParameters('texto')).toBe('texto')
  })
})
