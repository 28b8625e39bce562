/**
 * Each layer of a defence in depth, alone: the outer layer is switched off and the inner one is
 * shown refusing the attack by itself (and, where both directions make sense, the other way round).
 * Which layer refused is read from the reason logged, so a test cannot pass on the wrong one.
 *
 * - A replayed passkey answer: the sealed flow's single use (the envelope, spent through
 *   `config.store`) and the WebAuthn challenge's own claim in the store.
 * - A replayed e-mail code: the sealed flow's single use and the adapter deleting the token.
 * - A cross-site server action (Next.js): the routes' CSRF flag and the origin check that stands in
 *   for the token in process; with every flag off, a token-less post is served over HTTP while
 *   the action still refuses.
 */
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { describe, expect, it, vi } from 'vitest'

/** Switches for the layers this file turns off, read when a request is served. */
const layers = vi.hoisted(() => ({
  csrfFlags: true,
  next: { headers: new Headers(), jar: new Map<string, string>(), redirects: [] as string[] },
}))

// The routing table as the handler has it, with each route's CSRF flag behind the switch.
vi.mock('../../core/http/routes.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../core/http/routes.js')>()
  const switched = (table: readonly import('../../core/http/routes.js').Route[]) =>
    table.map((route) => ({
      ...route,
      get csrf() {
        return layers.csrfFlags ? route.csrf : undefined
      },
    }))
  const tables = new WeakMap<object, ReturnType<typeof switched>>()
  return {
    ...original,
    routes: switched(original.routes),
    routingTable: (config: Parameters<typeof original.routingTable>[0]) => {
      if (!tables.has(config.flows)) tables.set(config.flows, switched(original.routingTable(config)))
      return tables.get(config.flows)!
    },
  }
})
// Next's request scope for the server actions: the request's headers, its cookie jar, its redirect.
vi.mock('next/headers.js', () => ({
  headers: async () => layers.next.headers,
  cookies: async () => ({
    toString: () => [...layers.next.jar].map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('; '),
    set: (name: string, value: string) => void layers.next.jar.set(name, value),
  }),
}))
vi.mock('next/dist/client/components/navigation.react-server.js', () => ({
  redirect: (url: string) => {
    layers.next.redirects.push(url)
    throw Object.assign(new Error('NEXT_REDIRECT'), { url })
  },
}))

import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth, memoryAuthStore, type AuthStore } from '../../core/index.js'
import NextAuth from '../../integrations/next/index.js'
import { EmailClient, emailConfig } from '../email/helpers.js'
import { authRequest, credentialsProvider, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { CHALLENGE_COOKIE, PasskeyBrowser, passkeyConfig, SESSION_COOKIE, seedPasskeyUser } from '../webauthn/helpers.js'

/** A shared store whose claims under `prefix` always succeed: that layer's single use is off. */
function storeWithoutClaims(prefix: string): AuthStore {
  const store = memoryAuthStore()
  const claim = store.claim.bind(store)
  return { ...store, claim: (key, ttl) => (key.startsWith(prefix) ? Promise.resolve(true) : claim(key, ttl)) }
}

/** What was logged as errors: name, message and the details kept in `cause`. */
const loggedReasons = (logger: ReturnType<typeof spyLogger>) =>
  logger.error.mock.calls
    .map(([error]) => `${(error as Error).name}: ${(error as Error).message} ${JSON.stringify((error as Error).cause ?? null)}`)
    .join('\n')

describe('a replayed passkey answer', () => {
  /**
   * Ada signs in with a passkey that reports no signature counter (counter 0, as many platform
   * passkeys do), so the counter check cannot refuse the replay: only the two single-use layers can.
   */
  async function signInThenReplay(store: AuthStore) {
    const users = createMemoryStore()
    const config = passkeyConfig(users, { store })
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(users, browser.authenticator, { id: 'u-ada', email: 'ada@example.com' })
    const { body } = await browser.options({ action: 'authenticate' })
    const sealed = browser.jar.get(CHALLENGE_COOKIE)!
    const answer = browser.authenticator.authenticate(body.options as PublicKeyCredentialRequestOptionsJSON, { counter: 0 })
    const first = await browser.answer('authenticate', answer)
    expect(first.headers.get('location')).toBe(ORIGIN)
    expect(await browser.session()).toMatchObject({ user: { email: 'ada@example.com' } })
    config.logger.error.mockClear()
    // The thief's copy of the request: the challenge cookie as it was, the same answer.
    const thief = new PasskeyBrowser(config, browser.authenticator)
    thief.jar.cookies.set(CHALLENGE_COOKIE, sealed)
    const replay = await thief.answer('authenticate', answer)
    expect(replay.status).toBe(302)
    expect(setCookie(replay, SESSION_COOKIE)).toBeUndefined()
    expect(await thief.session()).toBeNull()
    expect(users.sessions.size).toBe(1)
    return { replay, reasons: loggedReasons(config.logger) }
  }

  it("is refused by the challenge's claim alone when the sealed flow opens twice", async () => {
    const { replay, reasons } = await signInThenReplay(storeWithoutClaims('envelope:'))
    expect(replay.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
    expect(reasons).toMatch(/The WebAuthn challenge was already used/)
    expect(reasons).not.toMatch(/envelope was already used/)
  })

  it("is refused by the sealed flow's single use alone when the challenge's claim always succeeds", async () => {
    const { replay, reasons } = await signInThenReplay(storeWithoutClaims('webauthn-challenge:'))
    expect(replay.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(reasons).toMatch(/envelope was already used/)
    expect(reasons).not.toMatch(/challenge was already used/)
  })
})

describe('a replayed e-mail code', () => {
  async function signInThenReplay(options: { store?: AuthStore; keepsTokens?: boolean }) {
    const setup = emailConfig({ provider: { code: true }, overrides: options.store ? { store: options.store } : {} })
    const { adapter, outbox } = setup
    const config = options.keepsTokens
      ? {
          ...setup.config,
          // Hands the row over and keeps it: this adapter's delete is off.
          adapter: {
            ...adapter,
            useVerificationToken: async (params: { identifier: string; token: string }) => {
              const row = await adapter.useVerificationToken!(params)
              if (row) await adapter.createVerificationToken!(row)
              return row
            },
          },
        }
      : setup.config
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const sealed = client.jar.get('__Secure-authchart.flow.email-signin')!
    const signedIn = await client.enterCode(outbox[0]!.code!)
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
    config.logger.error.mockClear()
    const thief = new EmailClient(config)
    thief.jar.cookies.set('__Secure-authchart.flow.email-signin', sealed)
    const replay = await thief.enterCode(outbox[0]!.code!)
    expect(replay.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
    expect(setCookie(replay, SESSION_COOKIE)).toBeUndefined()
    expect(await thief.session()).toMatchObject({ body: null })
    return loggedReasons(config.logger as ReturnType<typeof spyLogger>)
  }

  it('is refused by the adapter deleting the token alone when the sealed flow opens twice', async () => {
    const reasons = await signInThenReplay({ store: storeWithoutClaims('envelope:') })
    expect(reasons).toMatch(/Verification: .*"hasInvite":false/)
    expect(reasons).not.toMatch(/envelope was already used/)
  })

  it("is refused by the sealed flow's single use alone when the adapter keeps the token", async () => {
    const reasons = await signInThenReplay({ keepsTokens: true })
    expect(reasons).toMatch(/envelope was already used/)
    expect(reasons).not.toMatch(/hasInvite/)
  })
})

describe('a cross-site server action (Next.js)', () => {
  const APP = 'app.example'
  const config = () => ({ secret: SECRET, trustHost: true, logger: spyLogger(), providers: [credentialsProvider()] })

  /** The victim's browser posts the attacker's form to the app's server action. */
  function crossSite(cookies: Record<string, string> = {}) {
    layers.next.headers = new Headers({ host: APP, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
    layers.next.jar = new Map(Object.entries(cookies))
    layers.next.redirects = []
  }

  it('is run by the routes without their CSRF flag: a same-site post without a token signs in (the outer layer is off)', async () => {
    layers.csrfFlags = false
    try {
      const response = await Auth(
        authRequest({ path: '/auth/callback/credentials', body: { username: 'alice', password: 'wonderland' } }),
        config(),
      )
      expect(setCookie(response, SESSION_COOKIE)).toBeDefined()
    } finally {
      layers.csrfFlags = true
    }
  })

  it.each([
    ['signIn', async (auth: ReturnType<typeof NextAuth>) => auth.signIn('credentials', { username: 'alice', password: 'wonderland' })],
    ['signOut', async (auth: ReturnType<typeof NextAuth>) => auth.signOut({ redirectTo: '/' })],
    ['unstable_update', async (auth: ReturnType<typeof NextAuth>) => auth.unstable_update({ user: { name: 'Mallory' } })],
  ])('is refused by the origin check alone when the routes have no CSRF flag (%s)', async (_name, act) => {
    layers.csrfFlags = false
    try {
      const auth = NextAuth(config())
      crossSite({ 'authjs.session-token': 'victim-session' })
      const outcome = await act(auth).then(
        () => null,
        (error: Error) => error,
      )
      expect(outcome).toBeInstanceOf(Error)
      expect((outcome as Error & { type?: string }).type).toBe('MissingCSRF')
      expect(layers.next.redirects).toEqual([])
      // Nothing was set: no session for the attacker's account, the victim's cookie untouched.
      expect([...layers.next.jar]).toEqual([['authjs.session-token', 'victim-session']])
    } finally {
      layers.csrfFlags = true
    }
  })
})
