/**
 * Which user an OAuth account joins, against an in-process stand-in of the provider: a repeat
 * sign-in (fresh tokens, not a new user), the events of a first one, a signed-in user — with a
 * database or a JWT session — and users without an e-mail address, who must never be matched by
 * their missing address.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryAdapter, createMemoryStore, type MemoryStore } from '../../adapters/memory.js'
import { signedInAdapterUser } from '../../core/session/current.js'
import { Client, ORIGIN, sessionReadContext, testConfig, featureConfig } from '../fixtures/http.js'
import { answerTo, signInAt, standIn, standInProvider, startAt, type StandIn } from './oauth-standin.js'
import { stepUp, type StepUpOptions } from '../../core/step-up.js'

function setup(op: StandIn, store: MemoryStore, overrides: Record<string, unknown> = {}) {
  const events = { signIn: vi.fn(), createUser: vi.fn(), linkAccount: vi.fn() }
  const config = featureConfig({
    adapter: MemoryAdapter(store),
    providers: [standInProvider(op)] as never,
    events,
    ...overrides,
  })
  return { client: new Client(config), config, events }
}

const accountsOf = (store: MemoryStore) => [...store.accounts.values()] as unknown as Record<string, unknown>[]

describe('a first OAuth sign-in', () => {
  it('creates the user, links the account, and tells the events so', async () => {
    const store = createMemoryStore()
    const { client, events } = setup(standIn(), store)
    const { callback } = await signInAt(client)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    const [user] = [...store.users.values()]
    expect(events.createUser).toHaveBeenCalledExactlyOnceWith({ user: expect.objectContaining({ id: user!.id, email: 'alice@example.com' }) })
    expect(events.linkAccount).toHaveBeenCalledExactlyOnceWith({
      user: expect.objectContaining({ id: user!.id }),
      account: expect.objectContaining({ provider: 'standin', providerAccountId: 'standin-user' }),
      profile: expect.objectContaining({ email: 'alice@example.com' }),
    })
    expect(events.signIn).toHaveBeenCalledWith(expect.objectContaining({ isNewUser: true }))
  })
})

describe('a repeat sign-in with a linked account', () => {
  it('is not a new user, and stores the fresh tokens on the account', async () => {
    const store = createMemoryStore()
    const op = standIn()
    await signInAt(setup(op, store).client)
    op.behaviour.token = { access_token: 'fresh-access-token', token_type: 'Bearer' }
    const again = setup(op, store)
    const { callback } = await signInAt(again.client)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(again.events.signIn).toHaveBeenCalledWith(expect.objectContaining({ isNewUser: false }))
    expect(again.events.createUser).not.toHaveBeenCalled()
    const accounts = accountsOf(store)
    expect(accounts).toHaveLength(1)
    expect(accounts[0]).toMatchObject({ access_token: 'fresh-access-token', userId: [...store.users.keys()][0] })
  })

  it('is allowed for the very user who is signed in', async () => {
    const store = createMemoryStore()
    const { client, config } = setup(standIn(), store)
    await signInAt(client)
    const { callback } = await signInAt(client)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(config.logger.error).not.toHaveBeenCalled()
  })

  it('is refused, logging why for that provider, while another user is signed in', async () => {
    const store = createMemoryStore()
    const op = standIn()
    await signInAt(setup(op, store).client)
    // Someone else signs in with another account of the provider…
    const { client, config } = setup(op, store)
    op.behaviour.claims = { sub: 'someone-else', email: 'mallory@example.com' }
    await signInAt(client)
    // …then with the first user's account.
    op.behaviour.claims = {}
    const { callback } = await signInAt(client)
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=OAuthAccountNotLinked`)
    const [error] = config.logger.error.mock.calls.at(-1)! as [Error & { type: string; cause: Record<string, unknown> }]
    expect([error.type, error.message, error.cause.provider]).toEqual([
      'OAuthAccountNotLinked',
      'The account is already associated with another user',
      'standin',
    ])
  })
})

describe('a new account while signed in with a JWT session', () => {
  it('is linked to the user the session names', async () => {
    const store = createMemoryStore()
    const op = standIn()
    const { client } = setup(op, store, { session: { strategy: 'jwt' } })
    await signInAt(client)
    op.behaviour.claims = { sub: 'second-account', email: 'alice.other@example.com' }
    const { callback } = await signInAt(client)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(store.users.size).toBe(1)
    const [userId] = [...store.users.keys()]
    expect(accountsOf(store).map((a) => [a.providerAccountId, a.userId])).toEqual([
      ['standin-user', userId],
      ['second-account', userId],
    ])
  })
})

describe('a provider account without an e-mail address', () => {
  it('never joins another user who has none either: it gets a user of its own', async () => {
    const store = createMemoryStore()
    const op = standIn()
    op.behaviour.claims = { sub: 'first', email: undefined }
    await signInAt(setup(op, store).client)
    op.behaviour.claims = { sub: 'second', email: undefined }
    const { client, config } = setup(op, store)
    const { callback } = await signInAt(client)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(config.logger.error).not.toHaveBeenCalled()
    expect(store.users.size).toBe(2)
    const owners = accountsOf(store).map((a) => a.userId)
    expect(new Set(owners).size).toBe(2)
  })
})

describe('the signed-in user an account would be linked to', () => {
  const contextFor = (config: ReturnType<typeof testConfig>, value: string) =>
    sessionReadContext(config, value, Math.floor(Date.now() / 1000))

  it('is null, not an error, for a session token that does not decrypt', async () => {
    const config = featureConfig({ adapter: MemoryAdapter(createMemoryStore()), session: { strategy: 'jwt' } })
    expect(await signedInAdapterUser(contextFor(config, 'not-a-jwe'))).toBeNull()
  })

  it('is null, not an error, when the adapter fails to read a database session', async () => {
    const adapter = { ...MemoryAdapter(createMemoryStore()), getSessionAndUser: () => Promise.reject(new Error('database down')) }
    const config = featureConfig({ adapter, session: { strategy: 'database' } })
    expect(await signedInAdapterUser(contextFor(config, 'some-session-token'))).toBeNull()
  })
})

describe('the account a sign-in hands on', () => {
  it("is the provider's account, now the user's: the jwt callback gets it with the user's id", async () => {
    const store = createMemoryStore()
    const jwt = vi.fn(({ token }: { token: Record<string, unknown> }) => token)
    const { client } = setup(standIn(), store, { session: { strategy: 'jwt' }, callbacks: { jwt } })
    await signInAt(client)
    const [userId] = [...store.users.keys()]
    const atSignIn = jwt.mock.calls.map(([args]) => (args as { account?: Record<string, unknown> | null }).account).filter(Boolean)
    expect(atSignIn).toEqual([expect.objectContaining({ provider: 'standin', providerAccountId: 'standin-user', userId })])
  })
})

describe('linking a new account to the signed-in user, a sensitive action', () => {
  afterEach(() => vi.useRealTimers())

  /** Signed in through the stand-in; a second account of the provider then started fresh and answered `seconds` later. */
  async function linkLate(policy: StepUpOptions, seconds: number) {
    vi.useFakeTimers({ toFake: ['Date'] })
    const store = createMemoryStore()
    const op = standIn()
    const { client, config, events } = setup(op, store, { session: { strategy: 'jwt' }, stepUp: stepUp(policy) })
    await signInAt(client)
    const session = client.jar.get('__Secure-authjs.session-token')
    op.behaviour.claims = { sub: 'second-account', email: 'alice.other@example.com' }
    const start = await startAt(client)
    vi.setSystemTime(Date.now() + seconds * 1000)
    const callback = await client.send({ path: '/callback/standin', query: answerTo(start.headers.get('location')!) })
    return { store, config, events, callback, sessionKept: client.jar.get('__Secure-authjs.session-token') === session }
  }

  it('links nothing from a session gone stale between the start and the callback, and says why', async () => {
    const { store, config, events, callback, sessionKept } = await linkLate({ actions: { 'link-account': { maxAge: 30 } } }, 40)
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=OAuthAccountNotLinked`)
    const [error] = config.logger.error.mock.calls.at(-1)! as [Error & { type: string; cause: Record<string, unknown> }]
    expect([error.type, error.message, error.cause.provider]).toEqual([
      'OAuthAccountNotLinked',
      'The session is too old to link another account: re-authenticate first',
      'standin',
    ])
    expect(accountsOf(store).map((a) => a.providerAccountId)).toEqual(['standin-user'])
    expect(events.linkAccount).toHaveBeenCalledTimes(1)
    expect(sessionKept).toBe(true)
  })

  it("links from the same stale session when the configuration turns linking's check off", async () => {
    const { store, callback } = await linkLate({ maxAge: 30, actions: { 'link-account': false } }, 40)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    const [userId] = [...store.users.keys()]
    expect(accountsOf(store).map((a) => [a.providerAccountId, a.userId])).toEqual([
      ['standin-user', userId],
      ['second-account', userId],
    ])
  })

  it('answers 503 and links nothing while the database cannot say who the signed-in user is', async () => {
    const store = createMemoryStore()
    const op = standIn()
    let down = false
    const memory = MemoryAdapter(store)
    const adapter = {
      ...memory,
      getUser: (id: string) =>
        down ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) : memory.getUser!(id),
    }
    const { client } = setup(op, store, { adapter, session: { strategy: 'jwt' } })
    await signInAt(client)
    op.behaviour.claims = { sub: 'second-account', email: 'alice.other@example.com' }
    down = true
    const { callback } = await signInAt(client)
    expect(callback.status).toBe(503)
    expect(callback.headers.get('retry-after')).toBe('5')
    expect(store.users.size).toBe(1)
    expect(accountsOf(store).map((a) => a.providerAccountId)).toEqual(['standin-user'])
  })
})
