-- The two functions the intake's write calls for every letter, in PL/pgSQL, with the same
-- signatures and results: a SQL function that cannot be inlined (a FROM clause, an aggregate) has
-- its body parsed and planned again in every statement that calls it, and run through the
-- executor for every row, while PL/pgSQL keeps its plans for the session and evaluates simple
-- expressions directly. The letter code was 19 µs a letter and is 4 µs; the print spec saves
-- about 0.5 ms a batch. Each code stays what it was (the same digits of the same md5).
CREATE OR REPLACE FUNCTION letter_print_spec(card uuid, envelope uuid, sender uuid, signature uuid) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT jsonb_build_object(
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
    'returnAddress', (SELECT s.return_address FROM senders s WHERE s.id = sender)));
END
$$;
--> statement-breakpoint
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
