/**
 * The credentials attempt limits and the refusals around `authorize`, down to what the mutation
 * group of `core/flows/credentials/flow.ts` changes: which field an attempt is counted under, that an
 * attempt without it is counted per client only, the counters' store keys (shared by every instance,
 * of this version and the next), and how each refusal ends (the page, the chart's final state in the
 * audit trail, the logged error).
 */
import { describe, expect, it } from 'vitest'
import { Auth, setClientAddress } from '../../core/index.js'
import { AccessDenied } from '../../core/errors.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { attemptIdentifier } from '../../core/flows/credentials/flow.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { CredentialsConfig } from '../../core/types.js'
import { authRequest, CookieJar, credentialsProvider, testConfig } from '../fixtures/http.js'
import { auditTrail } from '../../core/audit.js'

type Config = ReturnType<typeof testConfig>

const provider = (credentials: Record<string, unknown>) => ({ credentials }) as unknown as CredentialsConfig

/** Posts `body` as JSON (so that arrays and objects arrive as they are), from `address` if given. */
async function post(config: Config, body: Record<string, unknown>, address?: string): Promise<URL> {
  const jar = new CookieJar()
  const csrf = await Auth(authRequest({ path: '/auth/csrf' }), config)
  jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const request = authRequest({ path: '/auth/callback/credentials', json: { ...body, csrfToken }, cookies: jar })
  const response = await Auth(address ? setClientAddress(request, address) : request, config)
  return new URL(response.headers.get('location')!)
}

/** A store that records the keys its limiter consumes. */
function recording(): { store: AuthStore; consumed: string[] } {
  const backend = memoryAuthStore()
  const consumed: string[] = []
  return {
    consumed,
    store: { ...backend, consume: (key, points, window) => (consumed.push(key), backend.consume(key, points, window)) },
  }
}

describe('the field an attempt is counted under', () => {
  it('is the first declared credential that is not a password, wherever the password is declared', () => {
    const passwordFirst = provider({ password: { type: 'password' }, username: { type: 'text' } })
    expect(attemptIdentifier(passwordFirst, { password: 'Secret', username: 'Alice' })).toBe('alice')
  })

  it('is a declared field without any description too (an input of undefined is not a password)', () => {
    const bare = provider({ pin: undefined, username: { type: 'text' } })
    expect(attemptIdentifier(bare, { pin: ' 1234 ', username: 'alice' })).toBe('1234')
  })

  it('is none when every declared credential is a password (the attempt is counted per client only)', () => {
    expect(attemptIdentifier(provider({ password: { type: 'password' } }), { password: 'x' })).toBeUndefined()
    expect(attemptIdentifier(provider({}), { username: 'alice' })).toBeUndefined()
    expect(attemptIdentifier({} as CredentialsConfig, { username: 'alice' })).toBeUndefined()
  })

  it('is none too when the body carries a field named "undefined": only a declared field is read', () => {
    const submitted = { undefined: 'mallory', password: 'x' }
    expect(attemptIdentifier(provider({ password: { type: 'password' } }), submitted)).toBeUndefined()
    expect(attemptIdentifier({} as CredentialsConfig, submitted)).toBeUndefined()
  })
})

describe('an attempt without the identifier field', () => {
  it('is counted per client only: attempts from many clients never share a per-identifier counter', async () => {
    const calls: unknown[] = []
    const config = testConfig({
      rateLimit: { credentials: { perIdentifier: 2, perAddress: 100 } },
      providers: [credentialsProvider((c) => (calls.push(c.password), null))],
    })
    for (let i = 0; i < 4; i++) {
      const url = await post(config, { password: `guess-${i}` }, `192.0.2.${20 + i}`)
      expect(url.searchParams.get('code')).toBe('credentials')
    }
    expect(calls).toHaveLength(4)
  })

  it('is still counted per client', async () => {
    const { store, consumed } = recording()
    const config = testConfig({ store, providers: [credentialsProvider(() => null)] })
    await post(config, { password: 'x' }, '192.0.2.30')
    expect(consumed).toHaveLength(1)
    expect(consumed[0]).toMatch(/^limit:credentials:credentials:address:[0-9a-f]{64}$/)
  })
})

describe('the counters in the store', () => {
  it('are named by scope, kind and a keyed hash: instances of every version share them, and no identifier or address is stored', async () => {
    const { store, consumed } = recording()
    const config = testConfig({ store, providers: [credentialsProvider(() => null)] })
    await post(config, { username: 'Alice', password: 'x' }, '192.0.2.40')
    expect(consumed).toHaveLength(2)
    expect(consumed).toContainEqual(expect.stringMatching(/^limit:credentials:credentials:identifier:[0-9a-f]{64}$/))
    expect(consumed).toContainEqual(expect.stringMatching(/^limit:credentials:credentials:address:[0-9a-f]{64}$/))
    expect(consumed.join(' ')).not.toMatch(/alice|192\.0\.2/i)
  })
})

describe('how a refused attempt ends', () => {
  function audited(authorize: (c: Record<string, unknown>) => unknown) {
    const events: AuditEvent[] = []
    const config = testConfig({ audit: auditTrail({ sink: (event) => void events.push(event) }), providers: [credentialsProvider(authorize)] })
    return { config, events }
  }
  const outcomes = (events: AuditEvent[]) => events.flatMap((event) => (event.outcome ? [event.outcome] : []))
  const finalStates = (events: AuditEvent[]) =>
    events.flatMap((event) => event.states ?? []).filter((state) => state.startsWith('credentials-signin:')).at(-1)

  it('a body with a field that is not a string or number: refused as wrong credentials (the chart ends in rejected)', async () => {
    const { config, events } = audited(() => {
      throw new Error('authorize must not run')
    })
    const url = await post(config, { username: ['alice'], password: 'wonderland' })
    expect(url.pathname).toBe('/auth/signin')
    expect(url.searchParams.get('error')).toBe('CredentialsSignin')
    expect(url.searchParams.get('code')).toBe('credentials')
    await expect.poll(() => finalStates(events)).toBe('credentials-signin:rejected')
  })

  it('authorize returning null: rejected too', async () => {
    const { config, events } = audited(() => null)
    const url = await post(config, { username: 'alice', password: 'x' })
    expect(url.searchParams.get('code')).toBe('credentials')
    await expect.poll(() => finalStates(events)).toBe('credentials-signin:rejected')
  })

  it('authorize throwing something else: the Configuration page, the chart ends in failed, the provider named in the log', async () => {
    const { config, events } = audited(() => {
      throw new Error('database down')
    })
    const url = await post(config, { username: 'alice', password: 'x' })
    expect(url.pathname).toBe('/auth/error')
    expect(url.searchParams.get('error')).toBe('Configuration')
    await expect.poll(() => finalStates(events)).toBe('credentials-signin:failed')
    const logged = config.logger.error.mock.calls.map(([error]) => error as Error & { type?: string; cause?: Record<string, unknown> })
    const reported = logged.find((error) => error.type === 'CallbackRouteError')
    expect(reported?.cause).toMatchObject({ provider: 'credentials' })
    expect((reported?.cause?.err as Error).message).toBe('database down')
    expect(outcomes(events)).toContainEqual({ type: 'refused', error: 'CallbackRouteError' })
  })

  it('authorize throwing an Auth.js error: that error, as its own type, on the page and in the audit trail', async () => {
    const { config, events } = audited(() => {
      throw new AccessDenied('not today')
    })
    const url = await post(config, { username: 'alice', password: 'x' })
    expect(url.pathname).toBe('/auth/error')
    expect(url.searchParams.get('error')).toBe('AccessDenied')
    await expect.poll(() => outcomes(events)).toContainEqual({ type: 'refused', error: 'AccessDenied' })
  })
})
