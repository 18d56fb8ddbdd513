import { returnReasonLabels } from '@letters/contracts'

/**
 * The floor page's script, served from /floor/scan.js: the CSP (helmet's `script-src 'self'`)
 * runs no inline script. A USB scanner types a code and Enter into the box; the script posts it
 * to /floor/scan (mode "Enviada") or, with the reason picked, to /floor/returned (mode
 * "Devuelta"), shows the answer green or red (the Spanish reason) and keeps the box focused, so
 * the next envelope can be scanned without touching the mouse. Everything it shows goes in as
 * text (textContent), never as HTML: recipient names are whatever a client sent.
 * Plain browser JavaScript, no build step; the reasons' names come from the contracts, their one home.
 */
export const SCAN_SCRIPT = `'use strict'
;(() => {
  const MAX_SCANS = 12
  const REASON_LABELS = ${JSON.stringify(returnReasonLabels)}
  const MODE_QUERY = { mailed: '', returned: '?modo=devuelta' }
  const form = document.getElementById('scan-form')
  const input = document.getElementById('scan')
  const feedback = document.getElementById('feedback')
  const scans = document.getElementById('scans')
  const reasons = document.getElementById('return-reasons')
  const hint = document.getElementById('scan-hint')
  const refresh = document.getElementById('refresh')
  const time = new Intl.DateTimeFormat('es-ES', { timeStyle: 'medium' })

  // Whatever takes the focus away (a click elsewhere, a link), it comes back to the box; but a
  // keyboard may walk to the mode and the reasons (Shift+Tab), which are the form's own controls.
  const refocus = () => setTimeout(() => input.focus(), 0)
  input.addEventListener('blur', (event) => {
    if (!(event.relatedTarget && form.contains(event.relatedTarget))) refocus()
  })
  input.focus()

  const checked = (name) => {
    const radio = form.querySelector('input[name="' + name + '"]:checked')
    return radio ? radio.value : ''
  }
  const mode = () => (checked('mode') === 'returned' ? 'returned' : 'mailed')

  // The mode shows: the reasons only in "Devuelta", its own hint and colour, and the URL (and
  // the page's refresh link) keep it, so a reload stays in it.
  function showMode() {
    const current = mode()
    reasons.hidden = current !== 'returned'
    form.className = 'mode-' + current
    hint.textContent = hint.dataset[current]
    const url = location.pathname + MODE_QUERY[current]
    history.replaceState(null, '', url)
    if (refresh) refresh.setAttribute('href', url)
  }
  form.addEventListener('change', (event) => {
    if (event.target.name === 'mode') showMode()
  })
  showMode()
  // A choice made with the pointer sends the focus back to the box, ready for the scanner; one
  // made with the keyboard (arrows, Space: a click of detail 0) leaves it there, and Enter
  // brings it back (a radio button does not submit its form).
  form.addEventListener('click', (event) => {
    if (event.detail > 0 && event.target !== input && event.target.closest('fieldset')) refocus()
  })
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && event.target.type === 'radio') {
      event.preventDefault()
      refocus()
    }
  })

  function show(ok, text) {
    feedback.textContent = text
    feedback.className = 'feedback ' + (ok ? 'ok' : 'error')
    const item = document.createElement('li')
    item.className = ok ? 'ok' : 'error'
    item.textContent = time.format(new Date()) + ' · ' + text
    scans.prepend(item)
    while (scans.children.length > MAX_SCANS) scans.lastElementChild.remove()
  }

  function whoAndWhere(card) {
    const recipient = card.recipient || {}
    const city = (card.address && card.address.city) || recipient.city || ''
    return card.code + ' · ' + [recipient.name, recipient.surname].filter(Boolean).join(' ') + ' · ' + city
  }

  const describeMailed = (card) => whoAndWhere(card) + ': enviada'

  function describeReturned(answer) {
    const card = answer.card
    const reason = REASON_LABELS[card.returnReason] || card.returnReason
    const list = answer.suppressionId
      ? 'dirección añadida a la lista de supresión del cliente'
      : card.returnReason === 'refused'
        ? 'dirección no suprimida: el rechazo es de la persona, no de la dirección'
        : 'dirección no suprimida: los datos de la carta ya estaban borrados'
    return whoAndWhere(card) + ' · Devuelta: ' + reason + ' · ' + list
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    const code = input.value.trim()
    input.value = ''
    refocus()
    if (!code) return
    const returned = mode() === 'returned'
    const reason = checked('reason')
    if (returned && !reason) {
      show(false, code + ': elige primero el motivo de la devolución y vuelve a escanearlo')
      return
    }
    try {
      const response = await fetch(returned ? '/floor/returned' : '/floor/scan', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(returned ? { code, reason } : { code }),
        credentials: 'same-origin',
      })
      const body = await response.json().catch(() => ({}))
      if (response.ok) {
        show(true, returned ? describeReturned(body) : describeMailed(body))
        // Each envelope carries its own reason: the next one is picked afresh (page-html.ts says
        // why), unless it was already picked while this answer was on its way.
        if (returned && checked('reason') === reason) for (const radio of reasons.querySelectorAll('input')) radio.checked = false
      } else show(false, code + ': ' + (body.message || 'error ' + response.status))
    } catch (error) {
      show(false, code + ': no se ha podido contactar con el servidor; vuelve a escanearlo')
    }
    refocus()
  })
})()
`
