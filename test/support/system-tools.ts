import { execFileSync } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'

/**
 * Debian's chromium-headless-shell (no browser download): Chromium's engine without the desktop
 * browser around it, which playwright-core drives as it would its own headless build. The full
 * browser run headless took about a sixth more CPU for the same pages.
 */
const CHROMIUM = '/usr/bin/chromium-headless-shell'

/** Chromium headless, with the flags a sandboxed CI machine without network needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}
const onPath = (command: string) => (process.env.PATH ?? '').split(delimiter).some((folder) => executable(join(folder, command)))

/** The languages tesseract has models for, one a line after its header; none when it is not installed. */
function tesseractLanguages(): string[] {
  if (!onPath('tesseract')) return []
  return execFileSync('tesseract', ['--list-langs'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
}

/**
 * What the suite needs from the machine beyond Node's packages: Chromium's headless shell for the
 * browser tests, poppler for uploaded PDF artwork and proof thumbnails, tesseract and its Spanish
 * model (English comes with it) for the envelopes read back by OCR, curl and script for the
 * first-hour test.
 * Missing, the run stops before any test with the command that installs them, instead of failing
 * deep inside a few.
 */
export function missingSystemTools(): string | undefined {
  const languages = tesseractLanguages()
  const missing = [
    ...(executable(CHROMIUM) ? [] : ['chromium-headless-shell']),
    ...(['pdftoppm', 'pdftocairo', 'pdfinfo'].every(onPath) ? [] : ['poppler-utils']),
    ...(languages.includes('eng') ? [] : ['tesseract-ocr']),
    ...(languages.includes('spa') ? [] : ['tesseract-ocr-spa']),
    // The first-hour test pastes the banner's curl command, and gives npm start a terminal with script.
    ...(onPath('curl') ? [] : ['curl']),
    ...(onPath('script') ? [] : ['bsdutils']),
  ]
  if (missing.length === 0) return undefined
  return `npm test needs ${missing.join(' and ')}: apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')} (.ci/run does this)`
}
