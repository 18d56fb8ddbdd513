/** The counts of letters that need a look, which the floor's page shows too. */
export { needsLookCountSql, needsLookFirstSql } from './stuck-letters.js'
