/**
 * The floor page's script, served from /floor/scan.js: the CSP (helmet's `script-src 'self'`)
 * runs no inline script. A USB scanner types a code and Enter into the box; the script posts it
 * to /floor/scan, shows the answer green (mailed) or red (the Spanish reason) and keeps the box
 * focused, so the next envelope can be scanned without touching the mouse. Everything it shows
 * goes in as text (textContent), never as HTML: recipient names are whatever a client sent.
 * Plain browser JavaScript, no build step.
 */
export const SCAN_SCRIPT = `'use strict'
;(() => {
  const MAX_SCANS = 12
  const form = document.getElementById('scan-form')
  const input = document.getElementById('scan')
  const feedback = document.getElementById('feedback')
  const scans = document.getElementById('scans')
  const time = new Intl.DateTimeFormat('es-ES', { timeStyle: 'medium' })

  // Whatever takes the focus away (a click elsewhere, a link), it comes back to the box.
  const refocus = () => setTimeout(() => input.focus(), 0)
  input.addEventListener('blur', refocus)
  input.focus()

  function show(ok, text) {
    feedback.textContent = text
    feedback.className = 'feedback ' + (ok ? 'ok' : 'error')
    const item = document.createElement('li')
    item.className = ok ? 'ok' : 'error'
    item.textContent = time.format(new Date()) + ' · ' + text
    scans.prepend(item)
    while (scans.children.length > MAX_SCANS) scans.lastElementChild.remove()
  }

  function describe(card) {
    const recipient = card.recipient || {}
    const city = (card.address && card.address.city) || recipient.city || ''
    return card.code + ' · ' + [recipient.name, recipient.surname].filter(Boolean).join(' ') + ' · ' + city + ': enviada'
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    const code = input.value.trim()
    input.value = ''
    refocus()
    if (!code) return
    try {
      const response = await fetch('/floor/scan', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code }),
        credentials: 'same-origin',
      })
      const body = await response.json().catch(() => ({}))
      if (response.ok) show(true, describe(body))
      else show(false, code + ': ' + (body.message || 'error ' + response.status))
    } catch (error) {
      show(false, code + ': no se ha podido contactar con el servidor; vuelve a escanearlo')
    }
    refocus()
  })
})()
`
