/** print_handoffs, and the batches the floor printed: print_batches, print_batch_letters and print_batch_handoffs. */
import { type Task, hid } from './staging.js'

/** A card and an envelope handed to the printer per live letter printed alone. */
export function printHandoffs(): string {
  return `
    INSERT INTO print_handoffs (letter_id, file, claim, printer, handed_at)
    SELECT h.id, h.id || f.suffix, h.print_claim, 'spool', coalesce(h.t_reclaim, h.t_printing) + f.after
    FROM hl h CROSS JOIN (VALUES ('.card.pdf', interval '8 seconds'), ('.envelope.pdf', interval '12 seconds')) AS f(suffix, after)
    -- An erased letter's records went with its files (recordLetterArtifactsRemoved).
    WHERE h.livemode AND h.b IS NULL AND h.t_printed IS NOT NULL AND h.erased_at IS NULL`
}

/**
 * The batches, their letters in order, and their three files each (batchFileNames, packages/artifacts:
 * cards, envelopes, manifest, in that order). A batch whose letters are all erased went with its
 * files (recordBatchArtifactsRemoved): only the batches holding a letter not yet erased are kept (hbk).
 */
export function printBatches(): Task {
  return [
    {
      label: 'print_batches',
      sql: [
        `CREATE UNLOGGED TABLE hbk AS SELECT b FROM hl WHERE b IS NOT NULL GROUP BY b HAVING bool_or(erased_at IS NULL)`,
        `INSERT INTO print_batches (id, status, opened_at, closed_at, handed_at, letter_count, card_stock, envelope_stock)
        SELECT ${hid("'batch'", 'b.b')}, 'handed', b.opened_at, b.closed_at, b.handed_at, b.cnt, b.card_stock, b.envelope_stock
        FROM hbb b JOIN hbk USING (b)
        ORDER BY b.b`,
      ],
    },
    {
      label: 'print_batch_letters',
      sql: `
      INSERT INTO print_batch_letters (batch_id, letter_id, sequence, added_at)
      SELECT ${hid("'batch'", 'h.b')}, h.id, h.seq, h.t_printing + interval '5 seconds' FROM hl h JOIN hbk USING (b)`,
    },
    {
      label: 'print_batch_handoffs',
      sql: `
      INSERT INTO print_batch_handoffs (batch_id, file, printer, handed_at)
      SELECT ${hid("'batch'", 'b.b')}, 'batch-' || ${hid("'batch'", 'b.b')} || f.suffix, 'spool', b.closed_at + f.after
      FROM hbb b JOIN hbk USING (b)
      CROSS JOIN (VALUES ('.cards.pdf', interval '4 seconds'), ('.envelopes.pdf', interval '8 seconds'), ('.manifest.csv', interval '10 seconds')) AS f(suffix, after)`,
    },
  ]
}
