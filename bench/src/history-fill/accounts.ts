/**
 * accounts, api_keys, card_designs, envelope_designs and their artworks, senders, signatures,
 * campaigns and campaign_variables, webhook_endpoints: what each account has before its first
 * letter, and the ways it makes letters (staging tables ha, hc, hep).
 */
import type { AccountPlan } from './plan.js'
import { type Fill, type Task, hid, u, valuesList } from './staging.js'

/** Accounts and what each has before its first letter: keys, designs and their artwork, senders, signatures, campaigns, webhook endpoints; and the ways each makes a letter (hc). */
export function accountsAndDesigns({ plans, START }: Fill): Task {
  const subscribed = (plan: AccountPlan) => [...new Set(plan.endpoints.flatMap((endpoint) => endpoint.events))]
  const cardRows = plans.flatMap((plan) => plan.cards.map((card, index) => [plan.account, index + 1, card.name, card.format, card.production, card.stockCode]))
  const envelopeRows = plans.flatMap((plan) =>
    plan.envelopes.map((envelope, index) => [plan.account, index + 1, envelope.name, envelope.format, envelope.stockCode, envelope.paperColor]),
  )
  const campaignRows = plans.flatMap((plan) =>
    plan.choices
      .filter((choice) => choice.campaign !== null)
      .map((choice) => [
        plan.account,
        choice.campaign,
        choice.name,
        choice.card,
        choice.envelope,
        choice.sender,
        choice.signature,
        choice.font,
        choice.template,
      ]),
  )
  const endpointRows = plans.flatMap((plan) => plan.endpoints.map((endpoint) => [plan.account, endpoint.endpoint, endpoint.events, endpoint.failRate]))
  const choiceRows = plans.flatMap((plan) =>
    plan.choices.map((choice) => [
      plan.account,
      choice.choice,
      choice.campaign,
      choice.card,
      choice.envelope,
      choice.sender,
      choice.signature,
      choice.font,
      choice.template,
    ]),
  )
  return [
    {
      label: 'accounts (plan)',
      sql: [
        `CREATE UNLOGGED TABLE ha AS
        SELECT v.a::int AS a, ${hid("'account'", 'v.a')} AS id, v.name::text AS name, v.campaigns::int AS campaigns, v.singles::int AS singles,
          v.senders::int AS senders, v.subscribed::text[] AS subscribed,
          ${START} - make_interval(days => 2 + floor(20 * ${u('v.a', 1)})::int, secs => floor(86400 * ${u('v.a', 2)})) AS created_at
        FROM (${valuesList(plans.map((plan) => [plan.account, plan.name, plan.campaigns, plan.singles, plan.senders, subscribed(plan)]))})
          AS v(a, name, campaigns, singles, senders, subscribed)`,
        'ANALYZE ha',
      ],
    },
    { label: 'accounts', sql: `INSERT INTO accounts (id, name, balance, created_at) SELECT id, name, 0, created_at FROM ha ORDER BY a` },
    {
      label: 'api_keys',
      sql: `
      INSERT INTO api_keys (id, account_id, key_hash, display_prefix, livemode, created_at)
      SELECT ${hid("'api-key-' || m.mode", 'ha.a')}, ha.id, encode(sha256(convert_to(m.prefix || md5('key:' || m.mode || ':' || ha.a), 'UTF8')), 'hex'),
        m.prefix || substr(md5('key:' || m.mode || ':' || ha.a), 1, 6), m.livemode, ha.created_at + interval '5 minutes'
      FROM ha CROSS JOIN (VALUES ('live', 'lk_live_', true), ('test', 'lk_test_', false)) AS m(mode, prefix, livemode)`,
    },
    {
      label: 'card_designs',
      sql: `
      INSERT INTO card_designs (id, account_id, name, format, production, stock_code, created_at)
      SELECT ${hid("'card'", 'v.a * 100 + v.k')}, ha.id, v.name, v.format, v.production, v.stock, ha.created_at + v.k * interval '10 minutes'
      FROM (${valuesList(cardRows)}) AS v(a, k, name, format, production, stock) JOIN ha ON ha.a = v.a`,
    },
    {
      label: 'envelope_designs',
      sql: `
      INSERT INTO envelope_designs (id, account_id, name, format, stock_code, paper_color, created_at)
      SELECT ${hid("'envelope'", 'v.a * 100 + v.k')}, ha.id, v.name, v.format, v.stock, v.color, ha.created_at + v.k * interval '12 minutes'
      FROM (${valuesList(envelopeRows)}) AS v(a, k, name, format, stock, color) JOIN ha ON ha.a = v.a`,
    },
    {
      label: 'senders',
      sql: `
      INSERT INTO senders (id, account_id, name, return_address, created_at)
      SELECT ${hid("'sender'", 'ha.a * 100 + s')}, ha.id, CASE WHEN s = 1 THEN ha.name ELSE ha.name || ' (atención al cliente)' END,
        jsonb_build_object('name', ha.name, 'company', NULL, 'address', 'Calle de la Industria ' || (1 + ha.a % 90), 'zip', '280' || lpad((ha.a % 60)::text, 2, '0'),
          'city', 'Madrid', 'province', 'Madrid', 'country', 'ES', 'countryName', 'España'),
        ha.created_at + s * interval '15 minutes'
      FROM ha CROSS JOIN LATERAL generate_series(1, ha.senders) AS s`,
    },
    {
      label: 'signatures',
      sql: `INSERT INTO signatures (id, account_id, name, created_at) SELECT ${hid("'signature'", 'ha.a')}, ha.id, 'Firma de ' || ha.name, ha.created_at + interval '20 minutes' FROM ha`,
    },
    // A front for every printed card, a logo for every envelope, a drawing for every signature:
    // small SVGs, so that each letter's print spec names real artwork versions.
    {
      label: 'artworks',
      sql: `
      INSERT INTO artworks (owner_id, version, account_id, use, format, content_type, bytes, sha256, original, print, preview, drawing, created_at)
      SELECT owner_id, 1, account_id, use, format, 'image/svg+xml', octet_length(svg), encode(sha256(svg), 'hex'), svg, svg,
        decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==', 'base64'), drawing, created_at
      FROM (
        SELECT d.id AS owner_id, d.account_id, 'card-front' AS use, d.format, d.created_at + interval '1 minute' AS created_at, NULL::jsonb AS drawing,
          convert_to('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 148 105"><rect width="148" height="105" fill="#F4EFE6"/><text x="10" y="50">' || d.name || '</text></svg>', 'UTF8') AS svg
        FROM card_designs d WHERE d.production = 'printed'
        UNION ALL
        SELECT d.id, d.account_id, 'envelope-logo', d.format, d.created_at + interval '1 minute', NULL,
          convert_to('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20"><circle cx="10" cy="10" r="8" fill="#2E5E4E"/><text x="20" y="14">' || left(d.name, 8) || '</text></svg>', 'UTF8')
        FROM envelope_designs d
        UNION ALL
        SELECT s.id, s.account_id, 'signature', NULL, s.created_at + interval '1 minute',
          jsonb_build_object('kind', 'paths', 'width', 300, 'height', 100, 'paths', jsonb_build_array('M10 80 C 40 10, 65 10, 95 80 S 150 150, 180 80', 'M190 70 L 280 60')),
          convert_to('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 100"><path d="M10 80 C 40 10, 65 10, 95 80 S 150 150, 180 80" stroke="#1B2A4A" fill="none"/></svg>', 'UTF8')
        FROM signatures s
      ) a`,
    },
    {
      label: 'campaigns',
      sql: `
      INSERT INTO campaigns (id, account_id, name, active, card_design_id, envelope_design_id, sender_id, signature_id, font_name, message, created_at, updated_at)
      SELECT ${hid("'campaign'", 'v.a * 1000 + v.k')}, ha.id, v.name, true, ${hid("'card'", 'v.a * 100 + v.card')}, ${hid("'envelope'", 'v.a * 100 + v.envelope')},
        ${hid("'sender'", 'v.a * 100 + v.sender')}, CASE WHEN v.signature THEN ${hid("'signature'", 'v.a')} END, v.font, v.template,
        ha.created_at + interval '1 hour' + v.k * interval '1 minute', ha.created_at + interval '1 hour' + v.k * interval '1 minute'
      FROM (${valuesList(campaignRows)}) AS v(a, k, name, card, envelope, sender, signature, font, template) JOIN ha ON ha.a = v.a`,
    },
    {
      label: 'campaign_variables',
      sql: `INSERT INTO campaign_variables (campaign_id, position, name, max_size, default_value, example) SELECT id, 0, 'nombre', 60, 'amiga', 'Lucía' FROM campaigns`,
    },
    {
      label: 'webhook_endpoints',
      sql: [
        `CREATE UNLOGGED TABLE hep AS
        SELECT v.a::int AS a, v.e::int AS e, ${hid("'endpoint'", 'v.a * 10 + v.e')} AS id, v.events::text[] AS events, v.fail_rate::float8 AS fail_rate
        FROM (${endpointRows.length > 0 ? valuesList(endpointRows) : 'VALUES (0, 0, ARRAY[]::text[], 0.0)'}) AS v(a, e, events, fail_rate) WHERE v.a > 0`,
        `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, livemode, disabled, created_at)
        SELECT p.id, ha.id, 'https://hooks.cliente' || p.a || '.example.com/letters/' || p.e, p.events,
          'whsec_' || encode(sha256(convert_to('secret:' || p.a || ':' || p.e, 'UTF8')), 'base64'), true, false, ha.created_at + p.e * interval '2 hours'
        FROM hep p JOIN ha ON ha.a = p.a`,
        'ANALYZE hep',
      ],
    },
    {
      label: 'letter choices (print specs)',
      sql: [
        `CREATE UNLOGGED TABLE hc AS
        SELECT x.*, s.spec,
          -- stocksOf (packages/contracts): the format, the stock code (or the design's artwork), and whether the floor prints the front.
          (s.spec -> 'card' ->> 'format') || ' ' || coalesce(s.spec -> 'card' ->> 'stockCode', (s.spec -> 'card' ->> 'designId') || '@' || coalesce(s.spec -> 'card' -> 'artwork' ->> 'version', '0'))
            || CASE WHEN s.spec -> 'card' ->> 'production' = 'printed' AND s.spec -> 'card' -> 'artwork' <> 'null' THEN ' + anverso impreso' ELSE '' END AS card_stock,
          (s.spec -> 'envelope' ->> 'format') || ' ' || coalesce(s.spec -> 'envelope' ->> 'stockCode', (s.spec -> 'envelope' ->> 'designId') || '@' || coalesce(s.spec -> 'envelope' -> 'artwork' ->> 'version', '0')) AS envelope_stock
        FROM (
          SELECT v.a::int AS a, v.choice::int AS choice, CASE WHEN v.campaign IS NOT NULL THEN ${hid("'campaign'", 'v.a * 1000 + v.campaign')} END AS campaign_id,
            ${hid("'card'", 'v.a * 100 + v.card')} AS card_id, ${hid("'envelope'", 'v.a * 100 + v.envelope')} AS envelope_id,
            ${hid("'sender'", 'v.a * 100 + v.sender')} AS sender_id, CASE WHEN v.signature THEN ${hid("'signature'", 'v.a')} END AS signature_id,
            coalesce(v.font, 'caveat') AS font_name, v.template::text AS template
          FROM (${valuesList(choiceRows)}) AS v(a, choice, campaign, card, envelope, sender, signature, font, template)
        ) x CROSS JOIN LATERAL (SELECT letter_print_spec(x.card_id, x.envelope_id, x.sender_id, x.signature_id) AS spec) s`,
        'ANALYZE hc',
      ],
    },
  ]
}
