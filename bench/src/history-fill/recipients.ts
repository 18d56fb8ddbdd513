/** The recipients letters are sent to (staging table hr): their addresses and names, what the address check made of each, and what an erasure leaves. */
import { type Fill, type Task, literal, u, valuesList } from './staging.js'

/** Spanish cities (and a few abroad) recipients live in: country, city, province, the start of their postal codes, the country's Spanish name. */
const CITIES: Array<[string, string, string | null, string, string]> = [
  ['ES', 'Madrid', 'Madrid', '28', 'España'],
  ['ES', 'Barcelona', 'Barcelona', '08', 'España'],
  ['ES', 'Valencia', 'Valencia', '46', 'España'],
  ['ES', 'Sevilla', 'Sevilla', '41', 'España'],
  ['ES', 'Zaragoza', 'Zaragoza', '50', 'España'],
  ['ES', 'Málaga', 'Málaga', '29', 'España'],
  ['ES', 'Murcia', 'Murcia', '30', 'España'],
  ['ES', 'Palma', 'Illes Balears', '07', 'España'],
  ['ES', 'Bilbao', 'Bizkaia', '48', 'España'],
  ['ES', 'Alicante', 'Alicante', '03', 'España'],
  ['ES', 'Córdoba', 'Córdoba', '14', 'España'],
  ['ES', 'Valladolid', 'Valladolid', '47', 'España'],
  ['ES', 'Vigo', 'Pontevedra', '36', 'España'],
  ['ES', 'Gijón', 'Asturias', '33', 'España'],
  ['ES', 'Granada', 'Granada', '18', 'España'],
  ['ES', 'A Coruña', 'A Coruña', '15', 'España'],
  ['ES', 'Vitoria-Gasteiz', 'Araba/Álava', '01', 'España'],
  ['ES', 'Pamplona', 'Navarra', '31', 'España'],
  ['ES', 'Santander', 'Cantabria', '39', 'España'],
  ['ES', 'Salamanca', 'Salamanca', '37', 'España'],
  ['PT', 'Lisboa', null, '1000-', 'Portugal'],
  ['PT', 'Porto', null, '4000-', 'Portugal'],
  ['FR', 'Paris', null, '75', 'Francia'],
  ['FR', 'Lyon', null, '69', 'Francia'],
  ['DE', 'Berlin', null, '10', 'Alemania'],
  ['DE', 'München', null, '80', 'Alemania'],
  ['IT', 'Roma', null, '00', 'Italia'],
  ['IT', 'Milano', null, '20', 'Italia'],
]

const FIRST_NAMES =
  'Lucía María Carmen Ana Laura Marta Elena Paula Sara Cristina Isabel Julia Nuria Rocío Irene Antonio José Manuel Francisco David Javier Daniel Carlos Miguel Alejandro Pablo Sergio Jorge Alberto Raúl'.split(
    ' ',
  )

const SURNAMES =
  'García Rodríguez González Fernández López Martínez Sánchez Pérez Gómez Martín Jiménez Ruiz Hernández Díaz Moreno Muñoz Álvarez Romero Alonso Gutiérrez Navarro Torres Domínguez Vázquez Ramos Gil Ramírez Serrano Blanco Molina'.split(
    ' ',
  )

const STREETS =
  'Calle Mayor|Calle Real|Avenida de la Constitución|Calle del Carmen|Plaza de España|Calle San Juan|Paseo de la Castellana|Calle Gran Vía|Calle de Alcalá|Avenida de América|Calle del Sol|Calle Nueva|Calle de la Iglesia|Ronda de Valencia|Calle Cervantes|Calle Goya'.split(
    '|',
  )

const COMPANIES = [
  'Talleres Ruiz S.L.',
  'Construcciones Alameda S.A.',
  'Asesoría Fiscal Norte',
  'Distribuciones Levante S.L.',
  'Clínica Vetusta',
  'Hostal Las Palmeras',
]

/** The recipients letters are sent to (hr), with what the address check made of each and what its erasure leaves. */
export function recipientPool({ POOL }: Fill): Task {
  const cities = CITIES.map(([country, city, province, zip, countryName], index) => [index + 1, country, city, province, zip, countryName])
  const spanish = CITIES.filter(([country]) => country === 'ES').length
  const pick = (values: readonly string[], salt: number) => `(${literal(values)})[1 + floor(${values.length} * ${u('k', salt)})::int]`
  return [
    {
      label: 'recipients (pool)',
      sql: [
        `CREATE UNLOGGED TABLE hr AS
        WITH p AS (
          SELECT k, ${pick(FIRST_NAMES, 201)} AS first_name, ${pick(SURNAMES, 202)} || ' ' || ${pick(SURNAMES, 203)} AS surname,
            CASE WHEN ${u('k', 204)} < 0.1 THEN ${pick(COMPANIES, 205)} END AS company,
            ${pick(STREETS, 206)} || ' ' || (1 + floor(150 * ${u('k', 207)}))::int
              || CASE WHEN ${u('k', 208)} < 0.6 THEN ', ' || (1 + floor(8 * ${u('k', 209)}))::int || 'º ' || substr('ABCD', 1 + floor(4 * ${u('k', 210)})::int, 1) ELSE '' END AS street,
            CASE WHEN ${u('k', 211)} < 0.92 THEN 1 + floor(${spanish} * ${u('k', 212)})::int
                 ELSE ${spanish + 1} + floor(${CITIES.length - spanish} * ${u('k', 212)})::int END AS city_index,
            ${u('k', 213)} AS kind_draw, lpad(floor(1000 * ${u('k', 214)})::int::text, 3, '0') AS zip_tail
          FROM generate_series(1::bigint, ${POOL}::bigint) AS k
        ),
        q AS (
          SELECT p.k, p.first_name, p.surname, p.company, p.street, c.country, c.city, c.province, c.country_name,
            CASE WHEN c.country <> 'ES' THEN 'deliverable' WHEN p.kind_draw < 0.02 THEN 'undeliverable' WHEN p.kind_draw < 0.1 THEN 'corrected' ELSE 'deliverable' END AS kind,
            -- An undeliverable one has a postal code a digit short.
            c.zip || CASE WHEN c.country = 'ES' AND p.kind_draw < 0.02 THEN left(p.zip_tail, 2) ELSE p.zip_tail END AS zip
          FROM p JOIN (${valuesList(cities)}) AS c(i, country, city, province, zip, country_name) ON c.i = p.city_index
        ),
        r AS (
          SELECT q.*, jsonb_build_object('name', first_name, 'surname', surname, 'company', company, 'address', street, 'zip', zip, 'city', city,
              'province', CASE WHEN kind = 'corrected' THEN NULL ELSE province END, 'country', country) AS recipient
          FROM q
        )
        SELECT k, first_name, country, kind, CASE WHEN country = 'ES' THEN 3 ELSE 5 END AS cost, recipient,
          jsonb_build_object('name', '', 'surname', '', 'company', NULL, 'address', '', 'zip', '', 'city', '', 'province', NULL, 'country', country) AS recipient_erased,
          address, address || '{"name": "", "surname": "", "company": null, "address": "", "zip": "", "city": "", "province": null, "changes": [], "problems": []}'::jsonb AS address_erased,
          CASE WHEN country = 'ES'
            THEN jsonb_build_array(first_name || ' ' || surname) || CASE WHEN company IS NULL THEN '[]' ELSE jsonb_build_array(company) END
              || jsonb_build_array(street, zip || ' ' || city || CASE WHEN province <> city THEN ' (' || province || ')' ELSE '' END)
            ELSE jsonb_build_array(first_name || ' ' || surname) || CASE WHEN company IS NULL THEN '[]' ELSE jsonb_build_array(company) END
              || jsonb_build_array(street, zip || ' ' || upper(city), upper(country_name))
          END AS address_lines,
          CASE WHEN kind = 'corrected' THEN 'Dirección corregida: province (provincia deducida del código postal)' ELSE 'Dirección verificada' END AS checked_detail,
          'el código postal ''' || zip || ''' no tiene el formato de ' || country_name AS problem,
          'el código postal ''…'' no tiene el formato de ' || country_name AS problem_erased
        FROM (
          SELECT r.*, r.recipient || jsonb_build_object('province', province, 'countryName', country_name, 'deliverability', kind,
              'changes', CASE WHEN kind = 'corrected' THEN jsonb_build_array(jsonb_build_object('field', 'province', 'from', NULL, 'to', province, 'reason', 'provincia deducida del código postal')) ELSE '[]' END,
              'problems', CASE WHEN kind = 'undeliverable' THEN jsonb_build_array('el código postal ''' || zip || ''' no tiene el formato de ' || country_name) ELSE '[]' END,
              'verifiedBy', 'offline') AS address
          FROM r
          OFFSET 0
        ) x`,
        'ANALYZE hr',
      ],
    },
  ]
}
