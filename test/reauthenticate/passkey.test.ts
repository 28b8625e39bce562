/**
 * Step-up with a passkey, through `Auth` over HTTP with the software authenticator: a stale
 * session is asked, asks the re-authentication for assertion options (its own passkeys only),
 * answers, and the action that asked (adding a second passkey) resumes once. Attacks: another
 * user's passkey, a replayed assertion, an answer for another relying party.
 */
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, type MemoryStore } from '../../adapters/memory.js'
import { decode } from '../../core/jwt.js'
import { ORIGIN, SECRET } from '../fixtures/http.js'
import { SoftwareAuthenticator, type AnswerOverrides } from '../fixtures/software-authenticator.js'
import { PasskeyBrowser, passkeyConfig, seedPasskeyUser, SESSION_COOKIE } from '../webauthn/helpers.js'

const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`
const REGISTER_OPTIONS = '/auth/webauthn-options/passkey?action=register'
const HTML = { accept: 'text/html' }
const ALICE = { id: 'u-alice', email: 'alice@example.com', name: 'Alice' }
const BOB = { id: 'u-bob', email: 'bob@example.com', name: 'Bob' }
const now = () => Math.floor(Date.now() / 1000)
const later = (minutes: number) => vi.setSystemTime(Date.now() + minutes * 60_000)

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

/** Alice (and Bob) with a passkey each; Alice signed in with hers, eleven minutes ago. */
async function staleAlice(strategy: 'jwt' | 'database') {
  const store = createMemoryStore()
  const config = passkeyConfig(store, { session: { strategy } })
  const alice = new PasskeyBrowser(config)
  const bobsAuthenticator = new SoftwareAuthenticator(ORIGIN)
  await seedPasskeyUser(store, alice.authenticator, ALICE)
  await seedPasskeyUser(store, bobsAuthenticator, BOB)
  await alice.signIn()
  expect((await alice.session())?.user?.email).toBe(ALICE.email)
  later(11)
  return { store, config, alice, bobsAuthenticator }
}

/** Asks to add a passkey as the page's button does (a navigation here, so the gate answers with a page). */
const askToAddPasskey = (browser: PasskeyBrowser) =>
  browser.client.send({ path: '/webauthn-options/passkey', query: { action: 'register' }, headers: HTML })

async function post(browser: PasskeyBrowser, fields: Record<string, string>, headers: Record<string, string> = HTML) {
  const csrfToken = await browser.client.csrfToken()
  return browser.client.send({ path: '/step/reauthenticate', body: { ...fields, csrfToken }, headers })
}

/** The options the page's script asks for. */
async function passkeyOptions(browser: PasskeyBrowser): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const asked = await post(browser, { event: 'reauth.passkeyOptions' }, { accept: 'application/json' })
  expect(asked.status).toBe(200)
  const body = (await asked.json()) as { action: string; options: PublicKeyCredentialRequestOptionsJSON }
  expect(body.action).toBe('authenticate')
  return body.options
}

const answer = (browser: PasskeyBrowser, response: unknown) => post(browser, { event: 'reauth.passkey', response: JSON.stringify(response) })

const authenticatorsOf = (store: MemoryStore, userId: string) => [...store.authenticators.values()].filter((a) => a.userId === userId)

for (const strategy of ['jwt', 'database'] as const) {
  describe(`step-up with a passkey (${strategy} sessions)`, () => {
    it('asks a stale session, takes an assertion by its own passkey, and resumes adding a passkey once', async () => {
      const { store, alice } = await staleAlice(strategy)
      const asked = await askToAddPasskey(alice)
      expect(asked.status).toBe(303)
      expect(asked.headers.get('location')).toBe(STEP_PAGE)
      const page = await (await alice.client.send({ path: '/step/reauthenticate', headers: HTML })).text()
      expect(page).toContain('Confirm with a passkey')
      expect(page).toContain('name="event" value="reauth.passkey"')

      const options = await passkeyOptions(alice)
      // Only Alice's own passkey may answer.
      const [own] = authenticatorsOf(store, ALICE.id)
      expect(options.allowCredentials?.map((c) => Buffer.from(c.id, 'base64url').toString('base64'))).toEqual([own!.credentialID])
      const counterBefore = own!.counter

      const resumed = await answer(alice, alice.authenticator.authenticate(options))
      expect(resumed.status).toBe(302)
      expect(resumed.headers.get('location')).toBe(REGISTER_OPTIONS)
      expect(authenticatorsOf(store, ALICE.id)[0]!.counter).toBe(counterBefore + 1)
      if (strategy === 'jwt') {
        const token = await decode({ token: alice.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
        expect((token as { fva?: Record<string, number> }).fva?.hwk).toBe(now())
      } else {
        expect([...store.sessions.values()].find((s) => s.userId === ALICE.id)!.fva).toMatchObject({ hwk: now() })
      }

      // The resumed request: now fresh, the second passkey is registered, once.
      const added = await alice.register({ action: 'register' })
      expect(added.status).toBe(302)
      expect(authenticatorsOf(store, ALICE.id)).toHaveLength(2)
      // The flow is spent: posting the same answer again proves nothing and adds nothing.
      const again = await answer(alice, alice.authenticator.authenticate(options))
      expect(again.headers.get('location')).not.toBe(REGISTER_OPTIONS)
      expect(authenticatorsOf(store, ALICE.id)).toHaveLength(2)
    })

    it("refuses another user's passkey assertion: counted, nothing recorded, Bob's counter unchanged", async () => {
      const { store, config, alice, bobsAuthenticator } = await staleAlice(strategy)
      await askToAddPasskey(alice)
      const options = await passkeyOptions(alice)
      const bobsPasskey = bobsAuthenticator.passkeys[0]!
      const bobCounter = authenticatorsOf(store, BOB.id)[0]!.counter
      // Bob's authenticator signs Alice's challenge (a stolen assertion, or a shared device).
      const forged = await answer(alice, bobsAuthenticator.authenticate(options, { credentialId: bobsPasskey.id }))
      expect(forged.headers.get('location')).toBe(STEP_PAGE)
      expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-other-user')
      expect(authenticatorsOf(store, BOB.id)[0]!.counter).toBe(bobCounter)
      expect(await (await alice.client.send({ path: '/step/reauthenticate', headers: HTML })).text()).toContain('That did not work')
      // Still stale: the action asks again, and no passkey was added.
      expect((await askToAddPasskey(alice)).headers.get('location')).toBe(STEP_PAGE)
      expect(authenticatorsOf(store, ALICE.id)).toHaveLength(1)
    })

    it('offers no passkey to a user without one: asking for options anyway is refused, nothing handed out', async () => {
      const { store, alice } = await staleAlice(strategy)
      for (const key of [...store.authenticators.keys()]) if (store.authenticators.get(key)!.userId === ALICE.id) store.authenticators.delete(key)
      await askToAddPasskey(alice)
      // Alice can prove nothing else here (no password, no code, no e-mail provider): refused outright.
      expect(alice.jar.get('__Secure-authchart.flow.reauthenticate')).toBeUndefined()
      const asked = await post(alice, { event: 'reauth.passkeyOptions' }, { accept: 'application/json' })
      expect(asked.status).not.toBe(200)
      expect(await asked.text()).not.toContain('allowCredentials')
    })

    it('refuses an assertion for another relying party, or replayed against new options', async () => {
      const { store, alice } = await staleAlice(strategy)
      await askToAddPasskey(alice)
      const forgeries: AnswerOverrides[] = [{ origin: 'https://evil.test' }, { rpId: 'evil.test' }]
      for (const overrides of forgeries) {
        const options = await passkeyOptions(alice)
        const refused = await answer(alice, alice.authenticator.authenticate(options, overrides))
        expect(refused.headers.get('location')).toBe(STEP_PAGE)
      }
      // An assertion signed for one challenge, posted after new options were asked for.
      const first = await passkeyOptions(alice)
      const old = alice.authenticator.authenticate(first)
      await passkeyOptions(alice)
      expect((await answer(alice, old)).headers.get('location')).toBe(STEP_PAGE)
      expect((await askToAddPasskey(alice)).headers.get('location')).toBe(STEP_PAGE)
      expect(authenticatorsOf(store, ALICE.id)).toHaveLength(1)
    })
  })
}
