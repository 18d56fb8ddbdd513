/** letters and letter_events, as each letter's timeline left them. */
import { RELEASED_DETAIL, TEST_MAILED_DETAIL } from '@letters/pipeline'
import { hid, literal, secs, u } from './staging.js'

/** The letters: each as its timeline left it, erased if it was due. */
export function letters(where: (number: string) => string): string {
  return `
    INSERT INTO letters (id, account_id, type, campaign_id, card_design_id, envelope_design_id, sender_id, signature_id, font_name, message, recipient,
      address, address_lines, print_spec, status, cost, livemode, send_at, print_claim, personal_data_erased_at, artifacts_removed_at, created_at, updated_at)
    SELECT h.id, ha.id, CASE WHEN c.campaign_id IS NULL THEN 'single' ELSE 'campaign' END, c.campaign_id, c.card_id, c.envelope_id, c.sender_id, c.signature_id,
      c.font_name, CASE WHEN h.erased_at IS NULL THEN replace(c.template, '{{nombre}}', r.first_name) ELSE '' END,
      CASE WHEN h.erased_at IS NULL THEN r.recipient ELSE r.recipient_erased END,
      CASE WHEN h.t_rfp IS NULL AND h.t_rej IS NULL THEN NULL WHEN h.erased_at IS NULL THEN r.address ELSE r.address_erased END,
      CASE WHEN h.t_rfp IS NOT NULL AND h.erased_at IS NULL THEN r.address_lines END,
      c.spec, h.status, r.cost, h.livemode, h.send_at, h.print_claim, h.erased_at, h.erased_at + ${secs(`1 + 4 * ${u('h.n', 18)}`)}, h.c, h.updated_at
    FROM hl h JOIN ha ON ha.a = h.a JOIN hc c ON c.a = h.a AND c.choice = h.choice JOIN hr r ON r.k = h.k
    WHERE ${where('h.n')}`
}

/** Each letter's letter_events, its ids in the order of its changes (16 a letter), with the details the pipeline writes. */
export function letterEvents(where: (number: string) => string): string {
  const cancelled = `CASE WHEN h.livemode THEN 'Cancelada por el cliente; ' || r.cost || ' créditos devueltos' ELSE 'Cancelada por el cliente; carta de prueba, sin cargo que devolver' END`
  return `
    INSERT INTO letter_events (id, letter_id, status, detail, at)
    SELECT h.n * 16 + v.k, h.id, v.status, v.detail, v.at
    FROM hl h JOIN hr r ON r.k = h.k
    CROSS JOIN LATERAL (VALUES
      (0, 'scheduled', h.t_sched, 'Programada: entrará en producción en la fecha indicada'),
      (1, 'cancelled', CASE WHEN h.t_recv IS NULL THEN h.t_cancel END, ${cancelled}),
      (2, 'received', h.t_recv, CASE WHEN h.send_at IS NOT NULL THEN ${literal(RELEASED_DETAIL)} END),
      (3, 'address_rejected', h.t_rej, 'Dirección no entregable: ' || CASE WHEN h.erased_at IS NULL THEN r.problem ELSE r.problem_erased END || '. '
        || CASE WHEN h.livemode THEN 'Créditos devueltos.' ELSE 'Carta de prueba: sin cargo que devolver.' END),
      (4, 'ready_for_print', h.t_rfp, r.checked_detail),
      (5, 'cancelled', CASE WHEN h.t_recv IS NOT NULL THEN h.t_cancel END, ${cancelled}),
      (6, 'printing', h.t_printing, 'En producción'),
      (7, 'printing', h.t_f1, 'Intento 1 de 3 fallido; se reintentará'),
      (8, 'printing', coalesce(h.t_reclaim, h.t_f2), 'En producción de nuevo: el intento anterior no terminó'),
      (9, 'printing', h.t_f3, 'Intento 2 de 3 fallido; se reintentará'),
      (10, 'printing', h.t_f4, 'En producción de nuevo: el intento anterior no terminó'),
      (11, 'failed', h.t_failed, 'La producción falló tras 3 intentos; operaciones revisará la carta'),
      (12, 'printed', h.t_printed, CASE WHEN NOT h.livemode THEN 'Carta de prueba: tarjeta y sobre generados; no se ha impreso'
        WHEN h.b IS NOT NULL THEN 'Entregada a la impresora en el lote ' || ${hid("'batch'", 'h.b')} || ' (n.º ' || h.seq || ' de ' || h.cnt || ')'
        ELSE 'Entregada a la impresora (spool): tarjeta y sobre' END),
      (13, 'mailed', h.t_mailed, CASE WHEN h.livemode THEN 'Entregada a correos' ELSE ${literal(TEST_MAILED_DETAIL)} END)
    ) AS v(k, status, at, detail)
    WHERE v.at IS NOT NULL AND ${where('h.n')}`
}
