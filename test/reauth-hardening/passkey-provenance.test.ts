/**
 * Issue 48, item 1, for the passkey factor over HTTP: with a `jwt` callback that merges update()
 * data, the holder of Alice's stale cookie rewrites the token's `email`, `name` and `id` to Bob's.
 * The options still list only the passkeys the adapter stores for the session's user, and Bob's
 * assertion proves nothing.
 */
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, type MemoryStore } from '../../adapters/memory.js'
import { ORIGIN } from '../fixtures/http.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { PasskeyBrowser, passkeyConfig, seedPasskeyUser } from '../webauthn/helpers.js'
import { mergingJwt } from './fixture.js'

const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`
const HTML = { accept: 'text/html' }
const ALICE = { id: 'u-alice', email: 'alice@example.com', name: 'Alice' }
const BOB = { id: 'u-bob', email: 'bob@example.com', name: 'Bob' }

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

async function post(browser: PasskeyBrowser, fields: Record<string, string>, headers: Record<string, string> = HTML) {
  return browser.client.send({ path: '/step/reauthenticate', body: { ...fields, csrfToken: await browser.client.csrfToken() }, headers })
}
const authenticatorsOf = (store: MemoryStore, userId: string) => [...store.authenticators.values()].filter((a) => a.userId === userId)
/** A stored credential id (base64) as the options carry it (base64url, unpadded). */
const idOf = (stored: { credentialID: string }) => stored.credentialID.replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')

describe('the passkey factor after update() rewrote the token (JWT sessions)', () => {
  it("lists only the session user's stored passkeys, and refuses Bob's assertion", async () => {
    const store = createMemoryStore()
    const config = passkeyConfig(store, { session: { strategy: 'jwt' }, callbacks: { jwt: mergingJwt } })
    const thief = new PasskeyBrowser(config)
    const bobs = new SoftwareAuthenticator(ORIGIN)
    await seedPasskeyUser(store, thief.authenticator, ALICE)
    await seedPasskeyUser(store, bobs, BOB)
    await thief.signIn()
    vi.setSystemTime(Date.now() + 11 * 60_000)
    await thief.client.send({ path: '/session', json: { csrfToken: await thief.client.csrfToken(), data: { email: BOB.email, name: BOB.name, id: BOB.id } } })
    expect((await thief.session())?.user?.email).toBe(BOB.email)

    expect((await thief.client.send({ path: '/webauthn-options/passkey', query: { action: 'register' }, headers: HTML })).headers.get('location')).toBe(STEP_PAGE)
    const asked = await post(thief, { event: 'reauth.passkeyOptions' }, { accept: 'application/json' })
    const options = ((await asked.json()) as { options: PublicKeyCredentialRequestOptionsJSON }).options
    const bobsIds = authenticatorsOf(store, BOB.id).map(idOf)
    expect(options.allowCredentials?.map((c) => c.id)).toEqual(authenticatorsOf(store, ALICE.id).map(idOf))
    expect(options.allowCredentials?.some((c) => bobsIds.includes(c.id))).toBe(false)

    const forged = await post(thief, { event: 'reauth.passkey', response: JSON.stringify(bobs.authenticate(options, { credentialId: bobs.passkeys[0]!.id })) })
    expect(forged.headers.get('location')).toBe(STEP_PAGE)
    expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-other-user')
    expect((await thief.client.send({ path: '/webauthn-options/passkey', query: { action: 'register' }, headers: HTML })).headers.get('location')).toBe(STEP_PAGE)
  })
})
