/**
 * The reauth mutation group's own checks: the core's side of the re-authentication (the callback
 * it asks the step-up module about), the freshness verdicts at their edges, and the per-factor
 * verification times read from untrusted storage.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { RequestContext } from '../../core/http/context.js'
import { waitingReauthentication } from '../../core/flows/reauthenticate/flow.js'
import { encode } from '../../core/jwt.js'
import { freshSignInDemand, sensitiveActionDemand } from '../../core/session/freshness.js'
import { factorTimesOfSession, factorTimesOfToken, lastVerified } from '../../core/session/verification.js'
import { stepUp } from '../../core/step-up.js'
import { Client, featureConfig, ORIGIN, SECRET, sessionReadContext, testConfig } from '../fixtures/http.js'

describe('the callback a re-authentication waits for', () => {
  it('is none without the step-up module: no re-authentication could have started', async () => {
    const ctx = { config: { stepUp: undefined } } as unknown as RequestContext
    expect(await waitingReauthentication(ctx, { code: 'c', state: 's' })).toBeUndefined()
  })

  it('is what the step-up module answers for this request and its parameters', async () => {
    const binding = { flow: 'reauthenticate' }
    const asked: unknown[] = []
    const ctx = {
      config: {
        stepUp: {
          waiting: async (context: unknown, params: unknown) => {
            asked.push(context, params)
            return binding
          },
        },
      },
    } as unknown as RequestContext
    expect(await waitingReauthentication(ctx, { code: 'c' })).toBe(binding)
    expect(asked).toEqual([ctx, { code: 'c' }])
  })
})

const SESSION_COOKIE = '__Secure-authjs.session-token'
const now = () => Math.floor(Date.now() / 1000)
const ELEVEN_MINUTES = 660

/** Alice's JWT session whose password was proven `age` seconds ago. */
const provenAgo = (age: number) =>
  encode({ token: { sub: 'u-1', name: 'Alice', email: 'alice@example.com', fva: { pwd: now() - age } }, secret: SECRET, salt: SESSION_COOKIE })

describe('the per-factor verification times read from untrusted storage', () => {
  it('reads a claim that is no object (a number, a string) as absent: the legacy sign-in time counts', () => {
    const legacy = { pwd: 50, hwk: 50, email: 50, fed: 50 }
    expect(factorTimesOfToken({ fva: 5, auth_time: 50 })).toEqual(legacy)
    expect(factorTimesOfToken({ fva: 'pwd', auth_time: 50 })).toEqual(legacy)
  })

  it('keeps a factor proven at time 0 and refuses a time written as a string', () => {
    expect(factorTimesOfToken({ fva: { pwd: 0, otp: '5' } })).toStrictEqual({ pwd: 0 })
  })

  it('names no factor at all for a session without a sign-in time, or with one that is no time', () => {
    expect(Object.keys(factorTimesOfToken({ sub: 'u-1' }))).toEqual([])
    expect(Object.keys(factorTimesOfToken({ auth_time: '50' }))).toEqual([])
    const row = { sessionToken: 't', userId: 'u', expires: new Date(0), createdAt: new Date('not a date') }
    expect(Object.keys(factorTimesOfSession(row))).toEqual([])
  })

  it('reads an amr naming no known factor as any first factor, never as an unknown one', () => {
    expect(factorTimesOfToken({ auth_time: 50, amr: ['mfa', 7] })).toStrictEqual({ pwd: 50, hwk: 50, email: 50, fed: 50 })
  })

  it('answers the latest accepted factor whatever the order, skipping the factors never proven', () => {
    expect(lastVerified({ hwk: 10, pwd: 20 })).toBe(20)
    expect(lastVerified({ hwk: 30, pwd: 20 })).toBe(30)
    expect(lastVerified({ email: 7 }, ['hwk', 'otp', 'email'])).toBe(7)
    expect(lastVerified({}, ['pwd'])).toBeUndefined()
  })
})

describe('a sensitive action without the step-up module: a fresh sign-in is the proof', () => {
  it('stops a JWT session whose last proof is older than ten minutes, naming every factor', async () => {
    const config = testConfig()
    const at = now()
    const demand = await sensitiveActionDemand(sessionReadContext(config, await provenAgo(601), at), 'revoke-sessions')
    expect(demand).toEqual({ action: 'revoke-sessions', policy: { maxAge: 600, factors: ['hwk', 'otp', 'pwd', 'email', 'fed'] } })
    expect(await freshSignInDemand(sessionReadContext(config, await provenAgo(590), at), 'revoke-sessions')).toBeUndefined()
  })

  it('lets a signed-out request through to the route, which answers it itself', async () => {
    expect(await freshSignInDemand(sessionReadContext(testConfig(), '', now()), 'revoke-sessions')).toBeUndefined()
  })

  it('stops a stale database session on an adapter that keeps session details, not on one that keeps none', async () => {
    const store = createMemoryStore()
    const adapter = MemoryAdapter(store)
    const config = testConfig({ adapter, session: { strategy: 'database' } })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const token = client.jar.get(SESSION_COOKIE)!
    store.sessions.get(token)!.fva = { pwd: now() - ELEVEN_MINUTES }
    expect(await freshSignInDemand(sessionReadContext(config, token, now()), 'add-passkey')).toMatchObject({ action: 'add-passkey' })
    const { listSessions: _none, ...authjsLike } = adapter
    const bare = testConfig({ adapter: authjsLike, session: { strategy: 'database' } })
    expect(await freshSignInDemand(sessionReadContext(bare, token, now()), 'add-passkey')).toBeUndefined()
  })

  it("asks the step-up module when the configuration names one, not the core's rule", async () => {
    const config = featureConfig({ stepUp: stepUp({ actions: { 'revoke-sessions': false } }) })
    expect(await sensitiveActionDemand(sessionReadContext(config, await provenAgo(ELEVEN_MINUTES), now()), 'revoke-sessions')).toBeUndefined()
  })

  it('answers a fetch through Auth with 401 and the sign-in URL back to the action, a page with a redirect there', async () => {
    const config = testConfig()
    const client = new Client(config)
    client.jar.cookies.set(SESSION_COOKIE, await provenAgo(ELEVEN_MINUTES))
    const csrfToken = await client.csrfToken()
    const back = `${ORIGIN}/auth/signin?${new URLSearchParams({ callbackUrl: `${ORIGIN}/auth/sessions?all=1` })}`
    const fetched = await client.send({ path: '/sessions', query: { all: '1' }, body: { csrfToken, all: 'true' }, headers: { accept: 'application/json' } })
    expect(fetched.status).toBe(401)
    expect(await fetched.json()).toMatchObject({ error: 'insufficient_user_authentication', maxAge: 600, url: back })
    const navigated = await client.send({
      path: '/sessions',
      query: { all: '1' },
      body: { csrfToken, all: 'true' },
      headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' },
    })
    expect(navigated.status).toBe(303)
    expect(navigated.headers.get('location')).toBe(back)
  })
})
