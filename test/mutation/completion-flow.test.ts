/**
 * The sign-in completion's effects through `Auth`, on the memory adapter and an in-process OpenID
 * provider (fast enough to run for every mutant of the completion group): what the `signIn` event
 * and the `jwt` callback are told, the provider session a sign-in records (which the provider's
 * front-channel logout then ends), the steps after the first sign-in (each recorded under its own
 * id and version), the new-user page, a wrong code that is not the last, and a step's bare denial.
 */
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { CONTINUE, DENY, runs, waitsFor, type FlowExtension } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, credentialsProvider, ORIGIN, featureConfig } from '../fixtures/http.js'
import { ISSUER, signInAt, standIn, standInProvider } from './oauth-standin.js'

const STEP = '/step/signin-completion'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const PROVIDER_SID = 'op-session-1'

/** An app with the password and the stand-in provider (front-channel logout on), on one memory store. */
function app(overrides: Partial<AuthConfig> = {}, store: MemoryStore = createMemoryStore()) {
  const op = standIn()
  op.behaviour.claims = { sid: PROVIDER_SID }
  const config = featureConfig({
    adapter: MemoryAdapter(store),
    providers: [credentialsProvider(), standInProvider(op, { frontchannelLogout: true })] as never,
    ...overrides,
  })
  return { config, store, op }
}

describe('the signIn event', () => {
  it('tells a credentials sign-in { user, account } only, as Auth.js does', async () => {
    const signIn = vi.fn()
    const { config } = app({ events: { signIn } })
    await new Client(config).signIn({ username: 'alice', password: 'wonderland' })
    expect(signIn).toHaveBeenCalledTimes(1)
    expect(Object.keys(signIn.mock.calls[0]![0]).sort()).toEqual(['account', 'user'])
  })

  it('tells an OAuth sign-in the profile and whether the user is new', async () => {
    const signIn = vi.fn()
    const { config } = app({ events: { signIn } })
    await signInAt(new Client(config))
    expect(signIn).toHaveBeenCalledWith(
      expect.objectContaining({ isNewUser: true, profile: expect.objectContaining({ sub: 'standin-user' }), account: expect.objectContaining({ provider: 'standin' }) }),
    )
    await signInAt(new Client(config))
    expect(signIn.mock.calls[1]![0]).toMatchObject({ isNewUser: false })
  })
})

describe('a database session', () => {
  it("belongs to a stored user, even a password sign-in's, whose session then reads back", async () => {
    const { config, store } = app({ session: { strategy: 'database' } })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect([...store.users.values()].map((user) => user.email)).toEqual(['alice@example.com'])
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })
})

describe('the jwt callback at an OAuth sign-in', () => {
  it("is given the provider's profile", async () => {
    const jwt = vi.fn(({ token }) => token)
    const { config } = app({ session: { strategy: 'jwt' }, callbacks: { jwt } })
    await signInAt(new Client(config))
    expect(jwt).toHaveBeenCalledWith(expect.objectContaining({ profile: expect.objectContaining({ sub: 'standin-user' }) }))
  })
})

describe('the provider session a sign-in records', () => {
  for (const strategy of ['jwt', 'database'] as const) {
    it(`is ended by the provider's front-channel logout (${strategy} sessions)`, async () => {
      const { config } = app({ session: { strategy } })
      const client = new Client(config)
      await signInAt(client)
      expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
      const logout = await client.send({ path: '/frontchannel-logout/standin', query: { iss: ISSUER, sid: PROVIDER_SID } })
      expect(await logout.text()).toContain('You are signed out.')
      expect((await client.session()).body).toBeNull()
    })
  }

  it('is none for a sign-in without one: the front-channel logout of a provider session ends nothing', async () => {
    const { config, op } = app({ session: { strategy: 'database' } })
    op.behaviour.claims = {}
    const client = new Client(config)
    await signInAt(client)
    const logout = await client.send({ path: '/frontchannel-logout/standin', query: { iss: ISSUER, sid: PROVIDER_SID } })
    expect(await logout.text()).toContain('There was no session to end here.')
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })
})

/** A store that records every member added to a set (the provider-session indexes). */
function recordingSets(): { store: AuthStore; added: string[] } {
  const backend = memoryAuthStore()
  const added: string[] = []
  return { added, store: { ...backend, addToSet: (key, member, ttl) => (added.push(member), backend.addToSet!(key, member, ttl)) } }
}

describe('the provider-session index a sign-in writes to a shared store (what back-channel logout reads)', () => {
  it('JWT sessions: the user, once the session is issued', async () => {
    const { store, added } = recordingSets()
    const { config } = app({ session: { strategy: 'jwt' }, store })
    await signInAt(new Client(config))
    expect(added).toEqual([expect.stringMatching(/^u:.+/)])
  })

  it('JWT sessions: nothing when the jwt callback issues no session', async () => {
    const { store, added } = recordingSets()
    const { config } = app({ session: { strategy: 'jwt' }, store, callbacks: { jwt: () => null } })
    await signInAt(new Client(config))
    expect(added).toEqual([])
  })

  it('database sessions on an adapter that keeps no provider sessions: the sealed session, by subject and by sid', async () => {
    const { store, added } = recordingSets()
    const memory = MemoryAdapter(createMemoryStore())
    const { config } = app({ session: { strategy: 'database' }, store, adapter: { ...memory, deleteProviderSessions: undefined } })
    const client = new Client(config)
    await signInAt(client)
    expect(added).toHaveLength(2)
    expect(added[0]).toBe(added[1])
    expect(added[0]).not.toMatch(/^u:/)
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })
})

/** A step after the first sign-in that waits for one answer on its own page. */
function firstSignInStep(id: string, version = '1'): FlowExtension {
  return defineExtension({
    id,
    version,
    at: 'afterFirstSignIn',
    initial: `${id}Asking`,
    states: { [`${id}Asking`]: waitsFor(id, { [`${id}.ok`]: { target: CONTINUE } }) },
    pages: { [id]: () => ({ title: id, html: `<p>step ${id}</p>` }) },
  })
}

/** Signs alice in with her password; answers each step the sign-in waits on; the steps asked. */
async function signInThroughSteps(config: AuthConfig): Promise<{ asked: string[]; client: Client }> {
  const client = new Client(config)
  const asked: string[] = []
  let response = await client.signIn({ username: 'alice', password: 'wonderland' })
  while (response.headers.get('location') === `${ORIGIN}/auth${STEP}`) {
    const page = await (await client.send({ path: STEP })).text()
    const id = /<p>step ([a-z]+)<\/p>/.exec(page)![1]!
    asked.push(id)
    response = await client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), event: `${id}.ok` } })
  }
  expect([response.headers.get('location'), client.jar.get(SESSION_COOKIE) !== undefined]).toEqual([ORIGIN, true])
  return { asked, client }
}

describe('steps after the first sign-in', () => {
  const beforeSession = defineExtension({
    id: 'audit',
    version: '1',
    at: 'beforeSession',
    initial: 'noting',
    states: { noting: runs('note', { done: CONTINUE }) },
    effects: { note: () => null },
  })

  it('are each recorded under their own id and version, and asked once', async () => {
    const store = createMemoryStore()
    const extensions = [beforeSession, firstSignInStep('first'), firstSignInStep('second', '2')]
    const { config } = app({ extensions }, store)
    expect((await signInThroughSteps(config)).asked).toEqual(['first', 'second'])
    expect([...store.completedSteps.values()]).toEqual([[
      { stepId: 'first', version: '1' },
      { stepId: 'second', version: '2' },
    ]])
    expect((await signInThroughSteps(config)).asked).toEqual([])
  })

  it('ask a step added later, of the version another step was completed at', async () => {
    const store = createMemoryStore()
    await signInThroughSteps(app({ extensions: [firstSignInStep('first')] }, store).config)
    const { config } = app({ extensions: [firstSignInStep('first'), firstSignInStep('second')] }, store)
    expect((await signInThroughSteps(config)).asked).toEqual(['second'])
  })

  it('record the one step at afterFirstSignIn, not an extension at another point listed before it', async () => {
    const store = createMemoryStore()
    const { config } = app({ extensions: [beforeSession, firstSignInStep('first')] }, store)
    expect((await signInThroughSteps(config)).asked).toEqual(['first'])
    expect([...store.completedSteps.values()]).toEqual([[{ stepId: 'first', version: '1' }]])
  })

  it('run on every sign-in where nothing can record them: no adapter, or one that only reads', async () => {
    const noAdapter = featureConfig({ extensions: [firstSignInStep('first')] })
    expect((await signInThroughSteps(noAdapter)).asked).toEqual(['first'])
    const memory = MemoryAdapter(createMemoryStore())
    const readOnly: Adapter = { ...memory, recordCompletedStep: undefined }
    const config = featureConfig({ adapter: readOnly, extensions: [firstSignInStep('first')] })
    expect((await signInThroughSteps(config)).asked).toEqual(['first'])
    expect((await signInThroughSteps(config)).asked).toEqual(['first'])
  })
})

describe('the new-user page', () => {
  it('gets the callback URL appended to its own query', async () => {
    const { config } = app({ pages: { newUser: '/welcome?tour=1' } })
    const { callback } = await signInAt(new Client(config))
    expect(callback.headers.get('location')).toBe(`/welcome?tour=1&${new URLSearchParams({ callbackUrl: ORIGIN })}`)
  })
})

describe('a second-factor code', () => {
  it('that is wrong but not the last allowed is not logged as the attempts exhausted', async () => {
    const { config, store } = app()
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    const now = Math.floor(Date.now() / 1000)
    await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now) } })
    expect([...store.secondFactors.values()].map((factor) => factor.type).sort()).toEqual(['backup-codes', 'totp'])
    const next = new Client(config)
    await next.signIn({ username: 'alice', password: 'wonderland' })
    const wrong = totpCode(secret, now + 30) === '000000' ? '111111' : '000000'
    await next.send({ path: STEP, body: { csrfToken: await next.csrfToken(), code: wrong } })
    expect(config.logger.warn).not.toHaveBeenCalledWith('second-factor-attempts-exhausted')
  })
})

describe("an application's step that denies without a reason", () => {
  it('refuses the sign-in with AccessDenied and no code', async () => {
    const refusing = defineExtension({
      id: 'gatekeeper',
      version: '1',
      at: 'beforeSession',
      initial: 'asking',
      states: { asking: waitsFor('gatekeeper', { 'gatekeeper.no': { target: DENY } }) },
      pages: { gatekeeper: () => ({ title: 'No', html: '<p>no</p>' }) },
    })
    const client = new Client(featureConfig({ extensions: [refusing] }))
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const denied = await client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), event: 'gatekeeper.no' } })
    expect(denied.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })
})
