import { Link } from 'react-router'
import { useCampaigns } from '../api'
import { Page } from '../components/Page'
import { ErrorBox, Loading } from '../components/Status'
import { useCan } from '../session'

export default function CampaignsPage() {
  const campaigns = useCampaigns()
  const canSend = useCan('send')
  return (
    <Page title="Campañas" lead="Tus campañas activas. Cada una tiene su diseño y su texto; las variables son los huecos que se rellenan en cada carta.">
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
