/**
 * The vendored `@simplewebauthn/browser` (core/pages/simplewebauthn-browser.ts) is exactly what
 * `npm run vendor:webauthn` makes from the installed package: updating the dependency without
 * regenerating it fails here.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { SIMPLEWEBAUTHN_BROWSER, SIMPLEWEBAUTHN_BROWSER_VERSION } from '../../core/pages/simplewebauthn-browser.js'

describe('the vendored @simplewebauthn/browser', () => {
  it('matches what npm run vendor:webauthn makes from the installed package', () => {
    const generated = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "import { renderModule } from './scripts/webauthn-browser.mjs'; process.stdout.write(renderModule())"],
      { encoding: 'utf8' },
    )
    expect(readFileSync('core/pages/simplewebauthn-browser.ts', 'utf8')).toBe(generated)
  })

  it('is the installed version, with its license notice, and safe inside a <script> element', () => {
    const installed = JSON.parse(readFileSync('node_modules/@simplewebauthn/browser/package.json', 'utf8')) as { version: string }
    expect(SIMPLEWEBAUTHN_BROWSER_VERSION).toBe(installed.version)
    expect(SIMPLEWEBAUTHN_BROWSER).toMatch(/^\/\*! @simplewebauthn\/browser [\d.]+ \| MIT \| Copyright \(c\) 2020 Matthew Miller \*\//)
    expect(SIMPLEWEBAUTHN_BROWSER).not.toMatch(/<\/script|<!--/i)
  })
})
