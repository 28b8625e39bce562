/**
 * Step-up at a linked OpenID provider, against the local `oidc-provider` (it honours
 * `prompt=login`: the user logs in there again), with JWT and database sessions on the memory
 * adapter and on the PostgreSQL adapter over PGlite: a stale session is asked, goes to the
 * provider, and the action completes exactly once. Then the attacks, each from the attacker's side:
 * a stale ID token (a provider that answered from an old login), another user's provider account
 * and an account linked to nobody, a replayed callback, a resumption after sign-out everywhere,
 * and a callback with no re-authentication waiting.
 */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { Adapter } from '../../core/adapters.js'
import { customFetch } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, ORIGIN, SECRET, featureConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider, type ProviderReturn, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { CALLBACK_BASE, appProvider, deliverCallback, idTokenForger, opClient, signInThroughProvider } from '../oauth/helpers.js'

const HTML = { accept: 'text/html' }
const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`
const SESSION_COOKIE = '__Secure-authjs.session-token'
const FLOW_COOKIE = '__Secure-authchart.flow.reauthenticate'
const ENROLMENT_COOKIE = '__Secure-authchart.flow.totp-enrolment'
const ACCESS_DENIED = `${ORIGIN}/auth/error?error=AccessDenied`
const now = () => Math.floor(Date.now() / 1000)
const later = (minutes: number) => vi.setSystemTime(Date.now() + minutes * 60_000)

let op: RunningOidcProvider
let pglite: PGlite

const forger = idTokenForger(() => op)

beforeAll(async () => {
  ;[op, pglite] = await Promise.all([
    startOidcProvider({ clients: [await opClient('client_secret_basic', 'op'), await opClient('client_secret_basic', 'op-old')] }),
    PGlite.create(),
  ])
}, 60_000)
afterAll(async () => {
  await Promise.all([op?.close(), pglite?.close()])
})
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  forger.forge = undefined
  op.decision = 'accept'
  op.loginAs = OP_ACCOUNT.sub
})
afterEach(() => {
  vi.useRealTimers()
})

let tables = 0
const BACKENDS: Record<string, () => Promise<Adapter>> = {
  memory: async () => MemoryAdapter(createMemoryStore()),
  pglite: async () => {
    const adapter = PostgresAdapter(pglite, { tablePrefix: `fed_${process.pid}_${++tables}` })
    await adapter.migrate()
    return adapter
  },
}

function app(adapter: Adapter, strategy: 'jwt' | 'database', overrides: Partial<AuthConfig> = {}) {
  return featureConfig({
    adapter,
    session: { strategy },
    store: memoryAuthStore(),
    providers: [
      appProvider(op.issuer, 'client_secret_basic', 'op'),
      // The same provider, seen through a stand-in that can answer with an old login.
      appProvider(op.issuer, 'client_secret_basic', 'op-old', { [customFetch]: forger.fetch }),
    ] as never,
    ...overrides,
  })
}

/** Signs in through the provider (the account is linked to a new user); returns the browser. */
async function signedInAtProvider(config: AuthConfig, providerId = 'op', opCookies = new Map<string, string>()) {
  const client = new Client(config)
  const { callback } = await signInThroughProvider(client, providerId, { opCookies })
  expect(callback.headers.get('location')).toBe(ORIGIN)
  return client
}

async function post(client: Client, path: string, body: Record<string, string>, headers: Record<string, string> = HTML) {
  return client.send({ path, body: { ...body, csrfToken: await client.csrfToken() }, headers })
}

const askToEnrol = (client: Client) => post(client, '/two-factor', {})

/** Chooses "Continue with <provider>" on the page: the redirect to the provider's login. */
async function continueWith(client: Client, provider = 'op'): Promise<URL> {
  const response = await post(client, '/step/reauthenticate', { event: 'reauth.federated', provider })
  expect(response.status).toBe(302)
  return new URL(response.headers.get('location')!)
}

/** The user at the provider: the provider's answer, not yet delivered. */
const atProvider = (url: URL, opCookies?: Map<string, string>): Promise<ProviderReturn> => visitProvider(url.href, CALLBACK_BASE, opCookies)

async function factorTimes(client: Client, adapter: Adapter, strategy: 'jwt' | 'database') {
  const token = client.jar.get(SESSION_COOKIE)!
  if (strategy === 'jwt') return ((await decode({ token, secret: SECRET, salt: SESSION_COOKIE })) as { fva?: Record<string, number> }).fva
  return (await adapter.getSessionAndUser!(token))?.session.fva
}

async function userIdOf(adapter: Adapter, providerAccountId: string, provider = 'op') {
  return (await adapter.getUserByAccount!({ provider, providerAccountId }))?.id
}

for (const backend of Object.keys(BACKENDS)) {
  for (const strategy of ['jwt', 'database'] as const) {
    describe(`step-up at the OpenID provider (${backend}, ${strategy} sessions)`, () => {
      it('asks a stale session, logs in again at the provider (prompt=login, max_age=0), and resumes the action once', async () => {
        const adapter = await BACKENDS[backend]!()
        const config = app(adapter, strategy)
        const opCookies = new Map<string, string>()
        const client = await signedInAtProvider(config, 'op', opCookies)
        later(11)
        const asked = await askToEnrol(client)
        expect(asked.status).toBe(303)
        expect(asked.headers.get('location')).toBe(STEP_PAGE)
        const page = await (await client.send({ path: '/step/reauthenticate', headers: HTML })).text()
        expect(page).toContain('Continue with OP (client_secret_basic)')
        expect(page).toContain('name="provider" value="op"')

        const startedAt = now()
        const authorization = await continueWith(client)
        expect(authorization.origin).toBe(new URL(op.issuer).origin)
        const asks = authorization.searchParams
        expect(asks.get('prompt')).toBe('login')
        expect(asks.get('max_age')).toBe('0')
        expect(asks.get('redirect_uri')).toBe(`${CALLBACK_BASE}op`)
        for (const secret of ['state', 'nonce', 'code_challenge']) expect(asks.get(secret)).toMatch(/^[\w-]{20,}$/)
        // Sealed in the re-authentication: no sign-in flow was started.
        expect(client.jar.get('__Secure-authjs.state')).toBeUndefined()
        const sessionBefore = client.jar.get(SESSION_COOKIE)

        // The provider still has the session of the sign-in eleven minutes ago; prompt=login makes
        // it ask again, so the ID token's auth_time is now.
        const answer = await atProvider(authorization, opCookies)
        const resumed = await deliverCallback(client, answer)
        expect(resumed.status).toBe(200)
        const resumePage = await resumed.text()
        expect(resumePage).toContain('action="/auth/two-factor"')
        expect(client.jar.get(FLOW_COOKIE)).toBeUndefined()
        expect((await factorTimes(client, adapter, strategy))?.fed).toBe(startedAt)
        if (strategy === 'database') expect(client.jar.get(SESSION_COOKIE)).toBe(sessionBefore)
        else expect(client.jar.get(SESSION_COOKIE)).not.toBe(sessionBefore)
        // Still the one user, with the one account: nothing linked, nobody new.
        const userId = await userIdOf(adapter, OP_ACCOUNT.sub)
        expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })

        // The action, posted by the resume page with its own CSRF token: it runs now, once.
        const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(resumePage)?.[1]
        expect(csrfToken).toBeDefined()
        const enrol = await client.send({ path: '/two-factor', body: { csrfToken: csrfToken! }, headers: HTML })
        expect(enrol.headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)
        expect(client.jar.get(ENROLMENT_COOKIE)).toBeDefined()
        // The same answer again resumes nothing, signs no one in, links nothing.
        const again = await deliverCallback(client, answer)
        expect(again.headers.get('location')).toMatch(/\/auth\/error\?error=/)
        expect(await userIdOf(adapter, OP_ACCOUNT.sub)).toBe(userId)
      })

      it("refuses a stale ID token (the provider answered from an old login): AccessDenied, counted, the session unchanged", async () => {
        const adapter = await BACKENDS[backend]!()
        const config = app(adapter, strategy)
        const client = await signedInAtProvider(config, 'op-old')
        later(11)
        await askToEnrol(client)
        const authorization = await continueWith(client, 'op-old')
        // As a provider that ignored prompt=login and max_age=0: the login of the sign-in.
        forger.forge = (claims) => forger.signedByProvider({ ...claims, auth_time: Number(claims.auth_time) - 11 * 60 })
        const sessionBefore = client.jar.get(SESSION_COOKIE)
        const fvaBefore = await factorTimes(client, adapter, strategy)
        const refused = await deliverCallback(client, await atProvider(authorization))
        expect(refused.headers.get('location')).toBe(ACCESS_DENIED)
        expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-failed')
        expect(config.logger.debug).toHaveBeenCalledWith('re-authentication refused', { reason: 'stale' })
        expect(client.jar.get(SESSION_COOKIE)).toBe(sessionBefore)
        expect(await factorTimes(client, adapter, strategy)).toEqual(fvaBefore)
        // Still stale: the action is asked again.
        expect((await askToEnrol(client)).headers.get('location')).toBe(STEP_PAGE)
      })

      it("refuses another user's provider account and an account linked to nobody: AccessDenied, counted, nothing linked", async () => {
        const adapter = await BACKENDS[backend]!()
        const store = memoryAuthStore()
        const increment = vi.spyOn(store, 'increment')
        const config = app(adapter, strategy, { store })
        // Mallory has her own account at the provider, linked to her own user here.
        op.loginAs = 'mallory-at-op'
        await signedInAtProvider(config)
        const mallory = await userIdOf(adapter, 'mallory-at-op')
        op.loginAs = OP_ACCOUNT.sub
        const alice = await signedInAtProvider(config)
        const aliceId = await userIdOf(adapter, OP_ACCOUNT.sub)
        later(11)

        for (const [account, linkedTo] of [
          ['mallory-at-op', mallory],
          ['nobody-at-op', undefined],
        ] as const) {
          await askToEnrol(alice)
          const authorization = await continueWith(alice)
          const sessionBefore = alice.jar.get(SESSION_COOKIE)
          op.loginAs = account
          vi.mocked(config.logger.warn).mockClear()
          increment.mockClear()
          const refused = await deliverCallback(alice, await atProvider(authorization))
          expect(refused.headers.get('location')).toBe(ACCESS_DENIED)
          // Counted against the re-authentication's attempts, as a wrong code is.
          expect(increment).toHaveBeenCalledWith(expect.stringMatching(/^reauth:attempts:/), expect.any(Number))
          expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-other-user')
          expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-failed')
          // Nothing linked, no sign-in as anyone, the same session.
          expect(await userIdOf(adapter, account)).toBe(linkedTo)
          expect(alice.jar.get(SESSION_COOKIE)).toBe(sessionBefore)
          expect(await userIdOf(adapter, OP_ACCOUNT.sub)).toBe(aliceId)
          expect((await alice.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
          expect((await askToEnrol(alice)).headers.get('location')).toBe(STEP_PAGE)
        }
      })
    })
  }
}

describe('step-up at the OpenID provider: attacks (memory adapter)', () => {
  it('refuses a replayed callback with a copy of the waiting flow, and counts it', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const store = memoryAuthStore()
    const increment = vi.spyOn(store, 'increment')
    const config = app(adapter, 'database', { store })
    const client = await signedInAtProvider(config)
    later(11)
    await askToEnrol(client)
    const authorization = await continueWith(client)
    const copy = client.jar.get(FLOW_COOKIE)!
    const answer = await atProvider(authorization)
    expect((await deliverCallback(client, answer)).status).toBe(200)
    // The attacker replays the answer with the flow cookie as it was.
    client.jar.cookies.set(FLOW_COOKIE, copy)
    increment.mockClear()
    const replayed = await deliverCallback(client, answer)
    expect(increment).toHaveBeenCalledWith(expect.stringMatching(/^reauth:attempts:/), expect.any(Number))
    expect(replayed.headers.get('location')).toBe(ACCESS_DENIED)
    expect(config.logger.debug).toHaveBeenCalledWith('re-authentication refused', expect.objectContaining({ reason: expect.stringContaining('already used') }))
  })

  it('refuses to resume after sign-out everywhere: the provider answer finds no session', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const config = app(adapter, 'database')
    const thief = await signedInAtProvider(config)
    later(11)
    await askToEnrol(thief)
    const answer = await atProvider(await continueWith(thief))
    // The owner signs in afresh and signs out everywhere before the thief's answer arrives.
    const owner = await signedInAtProvider(config)
    await post(owner, '/sessions', { revoke: 'all' })
    expect((await owner.session()).body).toBeNull()
    const refused = await deliverCallback(thief, answer)
    expect(refused.headers.get('location')).toBe(ACCESS_DENIED)
    expect((await thief.session()).body).toBeNull()
    expect(thief.jar.get(ENROLMENT_COOKIE)).toBeUndefined()
  })

  it('turns a callback with no re-authentication waiting into neither a sign-in nor a link', async () => {
    const adapter = MemoryAdapter(createMemoryStore())
    const config = app(adapter, 'jwt')
    const client = await signedInAtProvider(config)
    const userId = await userIdOf(adapter, OP_ACCOUNT.sub)
    later(11)
    await askToEnrol(client)
    const authorization = await continueWith(client)
    op.loginAs = 'mallory-at-op'
    const answer = await atProvider(authorization)
    // The flow cookie is gone (another tab finished it, or an attacker hands the answer to a
    // browser that has none): the answer is no sign-in's.
    client.jar.cookies.delete(FLOW_COOKIE)
    const session = client.jar.get(SESSION_COOKIE)
    const refused = await deliverCallback(client, answer)
    expect(refused.headers.get('location')).toMatch(/\/auth\/(error|signin)\?error=/)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'InvalidCheck' }))
    expect(await userIdOf(adapter, 'mallory-at-op')).toBeUndefined()
    expect(client.jar.get(SESSION_COOKIE)).toBe(session)
    expect(await userIdOf(adapter, OP_ACCOUNT.sub)).toBe(userId)
    // In a browser signed out, the same answer signs no one in either.
    const stranger = new Client(config)
    const strangerAnswer = await deliverCallback(stranger, answer)
    expect(strangerAnswer.headers.get('location')).toMatch(/\/auth\/(error|signin)\?error=/)
    expect((await stranger.session()).body).toBeNull()
  })
})
