-- The print spec as a table function of one row, in plain SQL: called with LATERAL in a
-- statement's FROM, Postgres inlines it into that statement, so the intake's write looks up every
-- distinct choice of its batch within its own plan, instead of entering a function, parsing and
-- planning its body again for every statement (a SQL function that cannot be inlined) or running
-- its query once per call (PL/pgSQL). letter_print_spec keeps its signature and result for every
-- other caller (a previous release's intake during a rolling upgrade among them), and reads the
-- same one definition.
CREATE FUNCTION letter_print_spec_of(card uuid, envelope uuid, sender uuid, signature uuid) RETURNS TABLE (spec jsonb)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'card', (SELECT jsonb_build_object('designId', d.id, 'name', d.name, 'format', d.format, 'production', d.production, 'stockCode', d.stock_code,
               'artwork', (SELECT jsonb_build_object('version', a.version, 'sha256', a.sha256) FROM artworks a WHERE a.owner_id = d.id AND a.format = d.format ORDER BY a.version DESC LIMIT 1))
             FROM card_designs d WHERE d.id = card),
    'envelope', (SELECT jsonb_build_object('designId', d.id, 'name', d.name, 'format', d.format, 'stockCode', d.stock_code, 'paperColor', d.paper_color,
               'artwork', (SELECT jsonb_build_object('version', a.version, 'sha256', a.sha256) FROM artworks a WHERE a.owner_id = d.id AND a.format = d.format ORDER BY a.version DESC LIMIT 1))
             FROM envelope_designs d WHERE d.id = envelope),
    'signature', (SELECT jsonb_build_object('id', s.id,
               'artwork', (SELECT jsonb_build_object('version', a.version, 'sha256', a.sha256) FROM artworks a WHERE a.owner_id = s.id ORDER BY a.version DESC LIMIT 1))
             FROM signatures s WHERE s.id = signature),
    'senderName', (SELECT s.name FROM senders s WHERE s.id = sender),
    'returnAddress', (SELECT s.return_address FROM senders s WHERE s.id = sender))
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION letter_print_spec(card uuid, envelope uuid, sender uuid, signature uuid) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT spec FROM letter_print_spec_of(card, envelope, sender, signature)
$$;
--> statement-breakpoint
-- The letter code in PL/pgSQL, with the same result for every id (the same digits of the same
-- md5): as a SQL function with a FROM clause and an aggregate it could not be inlined into the
-- generated column, and ran through the executor for every letter (19 µs a letter; 4 µs now).
CREATE OR REPLACE FUNCTION letter_code(letter_id uuid) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
  bits bigint := ('x' || substr(md5(letter_id::text), 1, 13))::bit(52)::bigint;
  code text := '';
BEGIN
  FOR i IN 0..9 LOOP
    code := code || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((bits >> (5 * (9 - i))) & 31)::int + 1, 1);
  END LOOP;
  RETURN code;
END
$$;
