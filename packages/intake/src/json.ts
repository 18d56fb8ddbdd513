/** A statement's rows go to Postgres as one JSON parameter, read back with jsonb_to_recordset. */
export const json = (value: unknown) => JSON.stringify(value)
