import { useEffect, useMemo, useRef, useState, type ChangeEvent, type FormEvent } from 'react'
import { Link, useNavigate } from 'react-router'
import { previewSingle, useCompanyData, useFonts, useSendSingle, type CompanyData, type Font, type SingleLetterBody } from '../api'
import { errorField, errorMessage, LettersApiError } from '../client'
import { Field } from '../components/Field'
import { Page } from '../components/Page'
import { ErrorBox, Loading, Notice } from '../components/Status'
import { letterCost } from '../costs'
import { countries } from '../countries'
import type { CountryCode } from '@letters/contracts/countries'
import { formatCredits } from '../format'
import { inkColors, inkNames, type InkColor } from '../labels'
import { newIdempotencyKey, nothingCreated } from '../keys'

/** The form's fields, named as the API names them, so that an error about `zip` lands on the postcode. */
interface LetterForm {
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
  signatureId: string
  fontName: string
  inkColor: InkColor
  message: string
  name: string
  surname: string
  company: string
  address: string
  zip: string
  city: string
  province: string
  country: string
}
type FieldName = keyof LetterForm
const fieldNames: ReadonlySet<string> = new Set<FieldName>([
  'cardDesignId',
  'envelopeDesignId',
  'senderId',
  'signatureId',
  'fontName',
  'inkColor',
  'message',
  'name',
  'surname',
  'company',
  'address',
  'zip',
  'city',
  'province',
  'country',
])
/** The form field an API error names, if it is one of this form's. */
const formFieldOf = (error: unknown) => {
  const field = errorField(error)
  return field !== undefined && fieldNames.has(field) ? (field as FieldName) : undefined
}

const MESSAGE_MAX = 1000
const PREVIEW_DELAY_MS = 600

/** The recipient's required fields, and what a person is told when one is empty. */
const required: Partial<Record<FieldName, string>> = {
  name: 'Escribe el nombre.',
  surname: 'Escribe los apellidos.',
  address: 'Escribe la dirección.',
  zip: 'Escribe el código postal.',
  city: 'Escribe la ciudad.',
}

/**
 * The recipient the preview is asked with: the handwritten side never shows the address (the
 * envelope does), so a fixed one lets the card show before the address is typed, keeps a
 * half-typed address from refusing the preview, and spares a request per key typed in it.
 */
const previewRecipient = {
  name: 'Nombre',
  surname: 'Apellidos',
  company: null,
  address: 'Calle Mayor 1',
  zip: '28013',
  city: 'Madrid',
  province: null,
  country: 'ES',
}
const recipientFields: ReadonlySet<string> = new Set(Object.keys(previewRecipient))

function initialForm(company: CompanyData, fonts: Font[]): LetterForm {
  return {
    cardDesignId: company.cardDesigns[0]?.id ?? '',
    envelopeDesignId: company.envelopeDesigns[0]?.id ?? '',
    senderId: company.senders[0]?.id ?? '',
    signatureId: '',
    fontName: (fonts.find((font) => font.default) ?? fonts[0])?.name ?? '',
    inkColor: 'blue',
    message: '',
    name: '',
    surname: '',
    company: '',
    address: '',
    zip: '',
    city: '',
    province: '',
    country: 'ES',
  }
}

const orNull = (text: string) => (text.trim() === '' ? null : text.trim())

function letterOf(form: LetterForm): SingleLetterBody {
  return {
    cardDesignId: form.cardDesignId,
    envelopeDesignId: form.envelopeDesignId,
    senderId: form.senderId,
    signatureId: orNull(form.signatureId),
    fontName: orNull(form.fontName),
    inkColor: form.inkColor,
    message: form.message.trim() === '' ? null : form.message,
    name: form.name.trim(),
    surname: form.surname.trim(),
    company: orNull(form.company),
    address: form.address.trim(),
    zip: form.zip.trim(),
    city: form.city.trim(),
    province: orNull(form.province),
    // The select offers only the contracts' codes; the API checks it again.
    country: form.country as CountryCode,
  }
}

export default function NewLetterPage() {
  const company = useCompanyData()
  const fonts = useFonts()
  if (company.isPending || fonts.isPending)
    return (
      <Page title="Nueva carta">
        <Loading />
      </Page>
    )
  if (company.error || fonts.error)
    return (
      <Page title="Nueva carta">
        <ErrorBox error={company.error ?? fonts.error} />
      </Page>
    )
  const missing = [
    company.data.cardDesigns.length === 0 && 'un diseño de tarjeta',
    company.data.envelopeDesigns.length === 0 && 'un diseño de sobre',
    company.data.senders.length === 0 && 'un remitente',
  ].filter(Boolean)
  if (missing.length > 0)
    return (
      <Page title="Nueva carta">
        <Notice kind="warning">
          <p>Para enviar cartas, tu cuenta necesita al menos {missing.join(', ')}. Pide a nuestro equipo que los prepare contigo.</p>
        </Notice>
      </Page>
    )
  return <NewLetterForm company={company.data} fonts={fonts.data} />
}

function NewLetterForm({ company, fonts }: { company: CompanyData; fonts: Font[] }) {
  const navigate = useNavigate()
  const send = useSendSingle()
  const [form, setForm] = useState(() => initialForm(company, fonts))
  const [touched, setTouched] = useState<ReadonlySet<FieldName>>(new Set())
  const [sendErrors, setSendErrors] = useState<Partial<Record<FieldName, string>>>({})
  const fieldRefs = useRef<Partial<Record<FieldName, HTMLElement | null>>>({})
  // One key per filled form: made at its first edit, kept while the same letter is sent again
  // (a double click, a retry after a network error), renewed once the API has created it or
  // refused it (then nothing was stored under the key, and the corrected letter is another body).
  const idempotencyKey = useRef<string | undefined>(undefined)
  // Set at once on submit: a double click's second event comes before the disabled button is drawn.
  const sending = useRef(false)

  const update = (name: FieldName) => (event: ChangeEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>) => {
    idempotencyKey.current ??= newIdempotencyKey()
    const value = event.target.value
    setForm((current) => ({ ...current, [name]: value }))
    setTouched((current) => (current.has(name) ? current : new Set(current).add(name)))
    setSendErrors((current) => {
      if (!(name in current)) return current
      const rest = { ...current }
      delete rest[name]
      return rest
    })
  }

  const preview = useLivePreview(form, touched)
  const errorOf = (name: FieldName) => sendErrors[name] ?? preview.fieldErrors[name]
  const control = (name: FieldName) => ({
    value: form[name],
    onChange: update(name),
    ref: (element: HTMLElement | null) => {
      fieldRefs.current[name] = element
    },
  })

  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (sending.current) return
    const empty = Object.fromEntries(
      Object.entries(required)
        .filter(([name]) => form[name as FieldName].trim() === '')
        .map(([name, missing]) => [name, missing]),
    ) as Partial<Record<FieldName, string>>
    const firstEmpty = Object.keys(empty)[0] as FieldName | undefined
    if (firstEmpty) {
      setSendErrors(empty)
      fieldRefs.current[firstEmpty]?.focus()
      return
    }
    const key = (idempotencyKey.current ??= newIdempotencyKey())
    sending.current = true
    send.mutate(
      { letter: letterOf(form), idempotencyKey: key },
      {
        onSettled: () => {
          sending.current = false
        },
        onSuccess: (created) => {
          idempotencyKey.current = undefined
          void navigate(`/cartas/${created.cardId}`, { state: { sent: true } })
        },
        onError: (error) => {
          if (error instanceof LettersApiError && nothingCreated(error.status)) idempotencyKey.current = undefined
          const field = formFieldOf(error)
          if (field) {
            setSendErrors({ [field]: errorMessage(error) })
            fieldRefs.current[field]?.focus()
          }
        },
      },
    )
  }

  const fieldError = formFieldOf(send.error)
  const generalError = send.error && !fieldError ? send.error : undefined
  const cost = letterCost(form.country)

  return (
    <Page title="Nueva carta" lead="Escribe el mensaje, elige cómo será la tarjeta y a quién va. La vista previa se actualiza mientras escribes.">
      <form className="new-letter" onSubmit={submit} noValidate>
        <fieldset className="new-letter-card">
          <legend>La tarjeta</legend>
          <Field label="Diseño de tarjeta" error={errorOf('cardDesignId')}>
            {(props) => (
              <select {...props} {...control('cardDesignId')}>
                {company.cardDesigns.map((design) => (
                  <option key={design.id} value={design.id}>
                    {design.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Diseño de sobre" error={errorOf('envelopeDesignId')}>
            {(props) => (
              <select {...props} {...control('envelopeDesignId')}>
                {company.envelopeDesigns.map((design) => (
                  <option key={design.id} value={design.id}>
                    {design.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Remitente" error={errorOf('senderId')}>
            {(props) => (
              <select {...props} {...control('senderId')}>
                {company.senders.map((sender) => (
                  <option key={sender.id} value={sender.id}>
                    {sender.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Firma" hint="Sin firma dibujada, la carta se firma con el nombre del remitente." error={errorOf('signatureId')}>
            {(props) => (
              <select {...props} {...control('signatureId')}>
                <option value="">Sin firma dibujada</option>
                {company.signatures.map((signature) => (
                  <option key={signature.id} value={signature.id}>
                    {signature.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <div className="field-row">
            <Field label="Letra" error={errorOf('fontName')}>
              {(props) => (
                <select {...props} {...control('fontName')}>
                  {fonts.map((font) => (
                    <option key={font.name} value={font.name}>
                      {font.family}
                      {font.own ? ' (propia)' : ''}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Tinta" error={errorOf('inkColor')}>
              {(props) => (
                <select {...props} {...control('inkColor')}>
                  {inkColors.map((ink) => (
                    <option key={ink} value={ink}>
                      {inkNames[ink]}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <Field label="Mensaje" hint={`${form.message.length} de ${MESSAGE_MAX} caracteres.`} error={errorOf('message')}>
            {(props) => <textarea {...props} {...control('message')} rows={8} maxLength={MESSAGE_MAX} />}
          </Field>
        </fieldset>

        <section className="new-letter-preview">
          <h2 id="preview-title">Vista previa</h2>
          <div className="preview-frame" aria-busy={preview.busy}>
            {preview.url ? (
              <img src={preview.url} alt="Vista previa" />
            ) : (
              <p className="hint">{preview.busy ? 'Preparando la vista previa…' : 'Aquí verás la tarjeta escrita.'}</p>
            )}
          </div>
          <p className="hint" role="status">
            {preview.error ?? (preview.busy && preview.url ? 'Actualizando…' : '')}
          </p>
        </section>

        <fieldset className="new-letter-recipient">
          <legend>Destinatario</legend>
          <div className="field-row">
            <Field label="Nombre" error={errorOf('name')}>
              {(props) => <input {...props} {...control('name')} type="text" autoComplete="off" required maxLength={100} />}
            </Field>
            <Field label="Apellidos" error={errorOf('surname')}>
              {(props) => <input {...props} {...control('surname')} type="text" autoComplete="off" required maxLength={100} />}
            </Field>
          </div>
          <Field label="Empresa" hint="Opcional." error={errorOf('company')}>
            {(props) => <input {...props} {...control('company')} type="text" autoComplete="off" maxLength={100} />}
          </Field>
          <Field label="Dirección" hint="Calle, número, piso y puerta." error={errorOf('address')}>
            {(props) => <input {...props} {...control('address')} type="text" autoComplete="off" required maxLength={200} />}
          </Field>
          <div className="field-row">
            <Field label="Código postal" error={errorOf('zip')}>
              {(props) => <input {...props} {...control('zip')} type="text" inputMode="text" autoComplete="off" required maxLength={16} />}
            </Field>
            <Field label="Ciudad" error={errorOf('city')}>
              {(props) => <input {...props} {...control('city')} type="text" autoComplete="off" required maxLength={100} />}
            </Field>
          </div>
          <div className="field-row">
            <Field label="Provincia" hint="Opcional." error={errorOf('province')}>
              {(props) => <input {...props} {...control('province')} type="text" autoComplete="off" maxLength={100} />}
            </Field>
            <Field label="País" error={errorOf('country')}>
              {(props) => (
                <select {...props} {...control('country')}>
                  {countries.map((country) => (
                    <option key={country.code} value={country.code}>
                      {country.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
        </fieldset>

        <div className="new-letter-send">
          <ErrorBox error={generalError} />
          {fieldError && (
            <p role="alert" className="field-error">
              Revisa el campo marcado: {errorMessage(send.error)}
            </p>
          )}
          <p className="cost">
            Coste: <strong>{formatCredits(cost)}</strong> {form.country === 'ES' ? '(envío en España)' : '(envío fuera de España)'}
          </p>
          <div className="actions">
            <button type="submit" disabled={send.isPending}>
              Enviar carta
            </button>
            <Link to="/cartas" className="button-link">
              Volver a las cartas
            </Link>
          </div>
          {send.isPending && <p role="status">Enviando la carta…</p>}
        </div>
      </form>
    </Page>
  )
}

/**
 * The handwriting page as POST /single/preview draws it, asked for once typing pauses: the
 * request before is aborted, and each image's object URL is revoked once it is replaced. Only the
 * card's fields ask again (see previewRecipient); the API's complaints about one of them are
 * shown beside it once the person has changed it.
 */
function useLivePreview(form: LetterForm, touched: ReadonlySet<FieldName>) {
  const [url, setUrl] = useState<string>()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<FieldName, string>>>({})
  const current = useRef<string | undefined>(undefined)

  const request = useMemo(() => {
    const { cardDesignId, envelopeDesignId, senderId, signatureId, fontName, inkColor, message } = letterOf(form)
    return JSON.stringify({ cardDesignId, envelopeDesignId, senderId, signatureId, fontName, inkColor, message, ...previewRecipient })
  }, [form])

  // The latest `touched`, read when an answer comes back, without asking again for each touch.
  const touchedRef = useRef(touched)
  touchedRef.current = touched

  useEffect(() => {
    const controller = new AbortController()
    const timer = window.setTimeout(() => {
      setBusy(true)
      previewSingle(JSON.parse(request) as SingleLetterBody, controller.signal)
        .then((png) => {
          const next = URL.createObjectURL(png)
          const previous = current.current
          current.current = next
          setUrl(next)
          if (previous) URL.revokeObjectURL(previous)
          setError(undefined)
          setFieldErrors({})
        })
        .catch((failure: unknown) => {
          if (controller.signal.aborted) return
          const field = formFieldOf(failure)
          const shown = field !== undefined && !recipientFields.has(field) && touchedRef.current.has(field)
          setFieldErrors(shown ? { [field]: errorMessage(failure) } : {})
          setError(`No se puede mostrar la vista previa: ${errorMessage(failure)}`)
        })
        .finally(() => {
          if (!controller.signal.aborted) setBusy(false)
        })
    }, PREVIEW_DELAY_MS)
    return () => {
      window.clearTimeout(timer)
      controller.abort()
    }
  }, [request])

  useEffect(
    () => () => {
      if (current.current) URL.revokeObjectURL(current.current)
      current.current = undefined
    },
    [],
  )

  return { url, busy, error, fieldErrors }
}
