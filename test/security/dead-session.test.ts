/**
 * A session that has ended stays ended on every path (issue 24, findings 1 and 2). Four kinds of
 * dead session, each one `GET /session` already refuses: a JWT after "sign out everywhere", a JWT
 * past `session.absoluteMaxAge`, a database row past its `expires` but not yet deleted, a row past
 * the absolute lifetime. With each, the thief holding the cookie tries what a signed-in user may
 * do: add a passkey, link their own OAuth account, list or revoke the owner's sessions, start a
 * second factor. Each attack runs with a live session of the same kind first, so every assertion
 * is shown to tell acting for the victim from acting for nobody.
 */
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import Passkey from '../../providers/passkey.js'
import {
  DEAD_SESSION_KINDS,
  SESSION_COOKIE,
  storedRow,
  victimApp,
  VICTIM,
  type SessionKind,
} from '../fixtures/dead-sessions.js'
import { Client, ORIGIN, featureConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { PasskeyBrowser } from '../webauthn/helpers.js'

const now = () => Math.floor(Date.now() / 1000)

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
})
afterAll(() => op?.close())

/** The victim's app: passkeys, the test OIDC provider, credentials; the kind's session settings. */
const app = (kind: SessionKind) =>
  victimApp(kind, {
    experimental: { enableWebAuthn: true },
    providers: [
      ...featureConfig().providers,
      Passkey(),
      appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'] }),
    ] as never,
  })

/** A browser holding `cookie` as its session cookie. */
function holding<T extends Client | PasskeyBrowser>(browser: T, cookie: string): T {
  browser.jar.cookies.set(SESSION_COOKIE, cookie)
  return browser
}

/** The kind's app with the victim's session live, and then with the same session dead. */
async function bothStates(kind: SessionKind) {
  const alive = app(kind)
  const dead = app(kind)
  return {
    alive: { ...alive, cookie: await kind.live(alive.store) },
    dead: { ...dead, cookie: await kind.kill(dead.store, dead.config, await kind.live(dead.store)) },
  }
}

describe.each(DEAD_SESSION_KINDS.map((kind) => [kind.name, kind] as const))('with %s', (_name, kind) => {
  it('GET /session already answers no session (the session route is the reference)', async () => {
    const { alive, dead } = await bothStates(kind)
    expect((await holding(new Client(alive.config), alive.cookie).session()).body).toMatchObject({ user: { email: VICTIM.email } })
    expect((await holding(new Client(dead.config), dead.cookie).session()).body).toBeNull()
  })

  it('refuses passkey registration options for the victim (GET webauthn-options?action=register)', async () => {
    const { alive, dead } = await bothStates(kind)
    const owner = await holding(new PasskeyBrowser(alive.config), alive.cookie).options({ action: 'register' })
    expect(owner.response.status).toBe(200)
    expect((owner.body.options as PublicKeyCredentialCreationOptionsJSON).user.name).toBe(VICTIM.email)

    const thief = await holding(new PasskeyBrowser(dead.config), dead.cookie).options({ action: 'register' })
    // Nobody is signed in and no address is given: Auth.js's answer for a sign-up without one.
    expect(thief.response.status).toBe(400)
    expect(thief.body).toEqual({ error: 'Invalid request' })
  })

  it('refuses to store a passkey whose options were fetched before the session ended', async () => {
    const { store, config } = app(kind)
    const browser = holding(new PasskeyBrowser(config), await kind.live(store))
    const { body } = await browser.options({ action: 'register' })
    holding(browser, await kind.kill(store, config, browser.jar.get(SESSION_COOKIE)!))
    const response = await browser.answer(
      'register',
      browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON),
    )
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(store.authenticators.size).toBe(0)
    expect([...store.accounts.values()].filter((a) => a.userId === VICTIM.id)).toEqual([])
  })

  it("does not link the thief's OAuth account to the victim", async () => {
    const { alive, dead } = await bothStates(kind)
    const linkedTo = async (store: MemoryStore) =>
      (await MemoryAdapter(store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub }))?.id

    await signInThroughProvider(holding(new Client(alive.config), alive.cookie), 'op')
    expect(await linkedTo(alive.store)).toBe(VICTIM.id)

    const thief = holding(new Client(dead.config), dead.cookie)
    await signInThroughProvider(thief, 'op')
    expect(await linkedTo(dead.store)).not.toBe(VICTIM.id)
    expect([...dead.store.accounts.values()].filter((a) => a.userId === VICTIM.id)).toEqual([])
  })

  it("neither lists nor revokes the victim's sessions (/sessions)", async () => {
    const { alive, dead } = await bothStates(kind)
    expect((await holding(new Client(alive.config), alive.cookie).send({ path: '/sessions' })).status).toBe(200)

    // The owner's session on another device, which a revocation would end.
    const other = kind.strategy === 'database' ? await storedRow(dead.store, now() - 60) : null
    const thief = holding(new Client(dead.config), dead.cookie)
    expect((await thief.send({ path: '/sessions' })).status).toBe(401)
    const revoke = kind.strategy === 'database' ? 'others' : 'all'
    const response = await thief.send({ path: '/sessions', body: { csrfToken: await thief.csrfToken(), revoke } })
    expect(response.status).toBe(401)
    if (other) expect(dead.store.sessions.has(other)).toBe(true)
  })

  it('neither shows the two-step settings nor starts an enrolment (/two-factor)', async () => {
    const { alive, dead } = await bothStates(kind)
    const signInFirst = `${ORIGIN}/auth/signin?${new URLSearchParams({ callbackUrl: `${ORIGIN}/auth/two-factor` })}`
    const owner = holding(new Client(alive.config), alive.cookie)
    expect((await owner.send({ path: '/two-factor' })).status).toBe(200)
    const started = await owner.send({ path: '/two-factor', body: { csrfToken: await owner.csrfToken() } })
    expect(started.headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)

    const thief = holding(new Client(dead.config), dead.cookie)
    expect((await thief.send({ path: '/two-factor' })).headers.get('location')).toBe(signInFirst)
    const refused = await thief.send({ path: '/two-factor', body: { csrfToken: await thief.csrfToken() } })
    expect(refused.headers.get('location')).toBe(signInFirst)
    expect(thief.jar.get('__Secure-authchart.flow.totp-enrolment')).toBeUndefined()
  })
})
