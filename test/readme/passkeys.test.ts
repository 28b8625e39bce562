/**
 * README `passkeys.ts`: with the embedded database and the relying party from the environment, a
 * browser signs up with a passkey, signs out and signs back in with it (software authenticator).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import { afterAll, describe, expect, it } from 'vitest'
import type { AuthConfig } from '../../core/types.js'
import { ORIGIN, SECRET } from '../fixtures/http.js'
import { PasskeyBrowser } from '../webauthn/helpers.js'
import { loadSnippet } from './snippet.js'

const dir = mkdtempSync(join(tmpdir(), 'authchart-readme-passkeys-'))
const { config } = await loadSnippet<{ config: AuthConfig }>('passkeys.ts', {
  AUTH_SECRET: SECRET,
  AUTH_DATA_DIR: join(dir, 'auth-data'),
  AUTH_RP_ID: new URL(ORIGIN).hostname,
  AUTH_RP_ORIGIN: ORIGIN,
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('README passkeys.ts', () => {
  it('signs up with a passkey for the configured relying party, signs out, and signs back in', async () => {
    const browser = new PasskeyBrowser({ ...config, logger: { warn: () => {} } })
    const { body } = await browser.options({ email: 'readme@example.com' })
    expect(body.action).toBe('register')
    expect((body.options as PublicKeyCredentialCreationOptionsJSON).rp).toEqual({ id: 'authchart.test', name: 'Example' })
    await browser.answer('register', browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON))
    expect((await browser.session())?.user?.email).toBe('readme@example.com')
    await browser.signOut()
    expect(await browser.session()).toBeNull()
    await browser.signIn()
    expect((await browser.session())?.user?.email).toBe('readme@example.com')
  })
})
