/**
 * The pure checks under re-authentication's redirects, at the module: every `Location` we write
 * (percent-encoded, normalised, never scheme-relative), the resume target (same origin, HTTP(S),
 * a path), and the label of the action being confirmed; and, over HTTP, whose password proves
 * the signed-in user under each session strategy.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { ALICE, Client, credentialsProvider, featureConfig } from '../fixtures/http.js'
import { isFresh, later, MALLORY, post } from '../reauth-hardening/fixture.js'
import { resumeTarget } from '../../core/flows/reauthenticate/gate.js'
import { actionLabelOf } from '../../core/flows/reauthenticate/policy.js'
import { encodeLocation } from '../../core/http/dispatch.js'

describe('a Location header', () => {
  it('is left as it is when it is printable ASCII, even where a parser would rewrite it', () => {
    expect(encodeLocation('/a/../b?x=1')).toBe('/a/../b?x=1')
    expect(encodeLocation('https://app.example/ok')).toBe('https://app.example/ok')
  })

  it('is serialised as the browser would follow it when it is not: an absolute URL with punycode, a path normalised', () => {
    expect(encodeLocation('https://例え.jp/パス')).toBe('https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9')
    expect(encodeLocation('/x/../日本?q=é#h')).toBe('/%E6%97%A5%E6%9C%AC?q=%C3%A9#h')
    expect(encodeLocation('/a:b/../日本')).toBe('/%E6%97%A5%E6%9C%AC')
    expect(encodeLocation('/a/../日本//')).toBe('/%E6%97%A5%E6%9C%AC//')
  })

  it('percent-encodes byte by byte what is neither an absolute URL nor a path', () => {
    expect(encodeLocation('x/../日本')).toBe('x/../%E6%97%A5%E6%9C%AC')
    expect(encodeLocation('https://[bad/日本')).toBe('https://[bad/%E6%97%A5%E6%9C%AC')
  })

  it('never leaves the site scheme-relative: the guard’s base instead, the target logged cut to 200 characters', () => {
    const error = vi.fn()
    const location = `//evil.example/${'a'.repeat(300)}`
    expect(encodeLocation(location, { base: 'https://app.example', logger: { error } })).toBe('https://app.example')
    expect(error).toHaveBeenCalledOnce()
    const message = (error.mock.calls[0]![0] as Error).message
    expect(message).toContain(JSON.stringify(location.slice(0, 200)))
    expect(message).not.toContain(location.slice(0, 201))
    expect(encodeLocation('/\\evil.example')).toBe('/')
  })
})

describe('the resume target', () => {
  it('is the path and query of a same-origin HTTP or HTTPS URL', () => {
    expect(resumeTarget('https://app.example/settings?tab=1#x', 'https://app.example')).toBe('/settings?tab=1')
    expect(resumeTarget('/settings', 'http://localhost:3000')).toBe('/settings')
    expect(resumeTarget('http://localhost:3000/a', 'http://localhost:3000')).toBe('/a')
  })

  it('is nothing for a URL that does not parse, or that is not HTTP(S) even where the origin matches', () => {
    expect(resumeTarget('http://[bad', 'https://app.example')).toBeUndefined()
    expect(resumeTarget('data:text/html,hi', 'null')).toBeUndefined()
    expect(resumeTarget('https://evil.example/x', 'https://app.example')).toBeUndefined()
  })
})

describe('the label of the action', () => {
  it('reads the revoke form only for revoking sessions', () => {
    expect(actionLabelOf('revoke-sessions', { revoke: 'all' })).toBe('sign out everywhere, this browser too')
    expect(actionLabelOf('add-passkey', { revoke: 'all' })).toBe('add a passkey')
    expect(actionLabelOf('revoke-sessions', {})).toBe('sign out your other sessions')
  })
})

describe('whose password proves the signed-in user', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  /** Alice signs in with `alice`; the provider answers `answers[username]` for the password `pw`. */
  async function app(strategy: 'jwt' | 'database', answers: Record<string, Record<string, unknown>>) {
    const store = createMemoryStore()
    store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
    store.users.set(MALLORY.id, { ...MALLORY, emailVerified: null })
    const provider = credentialsProvider((c) => (c.password === 'pw' && Object.hasOwn(answers, String(c.username)) ? (answers[String(c.username)] as never) : null))
    const adapter = MemoryAdapter(store)
    const config = featureConfig({ adapter, session: { strategy }, store: memoryAuthStore(), providers: [provider] })
    const alice = new Client(config)
    if (strategy === 'database') {
      // A database session is a stored row; the credentials accounts name Alice by her id and by her address.
      const sessionToken = `session-${crypto.randomUUID()}`
      await adapter.createSession({ sessionToken, userId: ALICE.id, expires: new Date(Date.now() + 86_400_000) })
      alice.jar.cookies.set('__Secure-authjs.session-token', sessionToken)
      for (const providerAccountId of [ALICE.id, ALICE.email]) {
        await adapter.linkAccount({ userId: ALICE.id, type: 'credentials' as never, provider: 'credentials', providerAccountId })
      }
    } else {
      expect((await alice.signIn({ username: 'alice', password: 'pw' })).status).toBe(302)
    }
    later(11)
    expect(await isFresh(alice)).toBe(false)
    const prove = async (username: string) => {
      await post(alice, '/two-factor', {})
      await post(alice, '/step/reauthenticate', { event: 'reauth.password', username, password: 'pw' })
      return isFresh(alice)
    }
    return { adapter, prove }
  }

  it('under JWT sessions, by the id authorize returns: the owner’s, never another’s, even one linked to the owner', async () => {
    const { adapter, prove } = await app('jwt', { alice: { ...ALICE }, mallory: { ...MALLORY }, alias: { id: 'alias-account', email: ALICE.email } })
    await adapter.linkAccount({ userId: ALICE.id, type: 'credentials' as never, provider: 'credentials', providerAccountId: 'alias-account' })
    expect(await prove('mallory')).toBe(false)
    expect(await prove('alias')).toBe(false)
    expect(await prove('alice')).toBe(true)
  })

  it('under database sessions, by the account authorize names: never one linked to no one, an id of null read as none', async () => {
    const { prove } = await app('database', { alice: { ...ALICE }, stranger: { id: 'u-unlinked' }, byEmail: { id: null, email: ALICE.email } })
    expect(await prove('stranger')).toBe(false)
    expect(await prove('byEmail')).toBe(true)
  })
})
