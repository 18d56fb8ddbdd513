import { cardDesignPreviewUrl, envelopeLogoUrl, fontPreviewUrl, signatureDrawingUrl, useCompanyData, useEnvelopeDesigns, useFonts, useSignatures } from '../api'
import { Page } from '../components/Page'
import { ErrorBox, Loading } from '../components/Status'

export default function DesignsPage() {
  const company = useCompanyData()
  const fonts = useFonts()
  const envelopes = useEnvelopeDesigns(company.data?.envelopeDesigns.map((design) => design.id) ?? [])
  const signatures = useSignatures(company.data?.signatures.map((signature) => signature.id) ?? [])

  return (
    <Page title="Diseños" lead="Lo que tu cuenta tiene preparado para sus cartas: tarjetas, sobres, firmas y letras.">
      {company.isPending ? (
        <Loading />
      ) : company.error ? (
        <ErrorBox error={company.error} />
      ) : (
        <>
          <section>
            <h2 id="designs-cards">Tarjetas</h2>
            {company.data.cardDesigns.length === 0 ? (
              <p>Aún no hay diseños de tarjeta.</p>
            ) : (
              <ul className="gallery">
                {company.data.cardDesigns.map((design) => (
                  <li key={design.id} className="gallery-item">
                    <img src={cardDesignPreviewUrl(design.id)} alt={`Anverso de la tarjeta «${design.name}»`} loading="lazy" />
                    <span>{design.name}</span>
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section>
            <h2 id="designs-envelopes">Sobres</h2>
            {company.data.envelopeDesigns.length === 0 ? (
              <p>Aún no hay diseños de sobre.</p>
            ) : (
              <ul className="plain-list">
                {company.data.envelopeDesigns.map((design, index) => {
                  const details = envelopes[index]?.data
                  return (
                    <li key={design.id}>
                      {details?.paperColor && <span className="swatch" style={{ background: details.paperColor }} aria-hidden="true" />}
                      <strong>{design.name}</strong>
                      {details && <span className="hint"> · {`${details.format} (${details.size.width} × ${details.size.height} mm)`}</span>}
                      {details?.artwork && (
                        <img className="envelope-logo" src={envelopeLogoUrl(design.id)} alt={`Logotipo del sobre «${design.name}»`} loading="lazy" />
                      )}
                    </li>
                  )
                })}
              </ul>
            )}
          </section>

          <section>
            <h2 id="designs-signatures">Firmas</h2>
            {company.data.signatures.length === 0 ? (
              <p>No hay firmas dibujadas: las cartas se firman con el nombre del remitente.</p>
            ) : (
              <ul className="plain-list">
                {company.data.signatures.map((signature, index) => (
                  <li key={signature.id}>
                    <strong>{signature.name}</strong>
                    {signatures[index]?.data?.artwork ? (
                      <img className="signature-drawing" src={signatureDrawingUrl(signature.id)} alt={`Firma dibujada «${signature.name}»`} loading="lazy" />
                    ) : (
                      signatures[index]?.data && <span className="hint"> · sin dibujo: se firma con el nombre del remitente</span>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section>
            <h2 id="designs-senders">Remitentes</h2>
            <ul className="plain-list">
              {company.data.senders.map((sender) => (
                <li key={sender.id}>{sender.name}</li>
              ))}
            </ul>
          </section>
        </>
      )}

      <section>
        <h2 id="designs-fonts">Letras</h2>
        {fonts.isPending ? (
          <Loading />
        ) : fonts.error ? (
          <ErrorBox error={fonts.error} />
        ) : (
          <ul className="font-list">
            {fonts.data.map((font) => (
              <li key={font.name}>
                <p>
                  <strong>{font.family}</strong>
                  {font.default && <span className="tag">Por defecto</span>}
                  {font.own && <span className="tag">Propia</span>}
                </p>
                <img src={fontPreviewUrl(font.name)} alt={`Muestra de la letra ${font.family}`} loading="lazy" />
              </li>
            ))}
          </ul>
        )}
      </section>
    </Page>
  )
}
