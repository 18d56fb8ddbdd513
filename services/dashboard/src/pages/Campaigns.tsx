import { Link } from 'react-router'
import { useCampaigns, useCampaignStats } from '../api'
import { Page } from '../components/Page'
import { ErrorBox, Loading } from '../components/Status'
import { formatCount, formatNumber, formatPercent } from '../format'
import { useCan } from '../session'

export default function CampaignsPage() {
  const campaigns = useCampaigns()
  const canSend = useCan('send')
  return (
    <Page
      title="Campañas"
      lead="Tus campañas activas y cómo van sus cartas. Cada una tiene su diseño y su texto; las variables son los huecos que se rellenan en cada carta."
    >
      {campaigns.isPending ? (
        <Loading />
      ) : campaigns.error ? (
        <ErrorBox error={campaigns.error} />
      ) : campaigns.data.length === 0 ? (
        <p>No tienes campañas activas.</p>
      ) : (
        campaigns.data.map((campaign) => (
          <section key={campaign.id} className="card">
            <h2 id={`campaign-${campaign.id}`}>{campaign.name}</h2>
            <CampaignResults campaignId={campaign.id} />
            {campaign.variables.length === 0 ? (
              <p>Esta campaña no tiene variables: todas sus cartas dicen lo mismo.</p>
            ) : (
              <div className="table-scroll" role="region" aria-label={`Variables de ${campaign.name}`} tabIndex={0}>
                <table>
                  <caption>Variables</caption>
                  <thead>
                    <tr>
                      <th scope="col">Variable</th>
                      <th scope="col">Si falta</th>
                      <th scope="col">Ejemplo</th>
                      <th scope="col" className="numeric">
                        Máximo
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {campaign.variables.map((variable) => (
                      <tr key={variable.name}>
                        <td className="mono cell-title">{variable.name}</td>
                        <td data-label="Si falta">{variable.defaultValue ?? <em>Obligatoria</em>}</td>
                        <td data-label="Ejemplo">{variable.example || '—'}</td>
                        <td className="numeric" data-label="Máximo">
                          {variable.maxSize} caracteres
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <p className="actions">
              <Link to={`/cartas?campana=${campaign.id}`}>Ver sus cartas</Link>
              {canSend && <Link to="/masivo">Hacer un envío masivo</Link>}
            </p>
          </section>
        ))
      )}
    </Page>
  )
}

/**
 * How the campaign's letters fared (GET /campaigns/{id}/stats): sent, handed to Correos, returned,
 * and, when its letters carry a QR code, how many were scanned and the share of those mailed.
 */
function CampaignResults({ campaignId }: { campaignId: string }) {
  const stats = useCampaignStats(campaignId)
  if (stats.isPending) return <Loading>Cargando los resultados…</Loading>
  if (stats.error) return <ErrorBox error={stats.error} />
  const { sent, mailed, returned, tracked, scanned, scans, scanRate } = stats.data
  if (sent === 0) return <p className="hint">Aún no se ha enviado ninguna carta de esta campaña.</p>
  const figures: [string, string][] = [
    ['Enviadas', formatNumber(sent)],
    ['En Correos', formatNumber(mailed)],
    ['Devueltas', formatNumber(returned)],
    ...(tracked > 0
      ? ([
          ['Escaneadas', formatNumber(scanned)],
          ['Tasa de escaneo', formatPercent(scanRate)],
        ] as [string, string][])
      : []),
  ]
  return (
    <>
      <dl className="summary campaign-results">
        {figures.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <p className="hint">
        {tracked === 0
          ? 'Sus cartas no llevan código QR.'
          : `${formatCount(tracked, 'carta lleva', 'cartas llevan')} código QR; ${formatCount(scans, 'escaneo', 'escaneos')} en total. La tasa de escaneo es la parte de las cartas en Correos cuyo código se ha escaneado.`}
      </p>
    </>
  )
}
