import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { requireRecentAuth } from '../../core/index.js'
import { encode } from '../../core/jwt.js'
import { freshnessOf } from '../../core/session/freshness.js'
import { Client, ORIGIN, SECRET, featureConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const now = () => Math.floor(Date.now() / 1000)

const appRequest = (cookie: string | undefined, headers: Record<string, string> = {}) =>
  new Request(`${ORIGIN}/settings/security?tab=keys`, {
    headers: { ...(cookie ? { cookie: `${SESSION_COOKIE}=${cookie}` } : {}), ...headers },
  })

const sealed = (claims: Record<string, unknown>) =>
  encode({ token: { sub: 'u-1', name: 'Alice', email: 'alice@example.com', ...claims }, secret: SECRET, salt: SESSION_COOKIE })

describe('freshness of a session under a step-up policy', () => {
  it('accepts a factor proven within maxAge and refuses one proven before', () => {
    expect(freshnessOf({ pwd: 1000 }, { maxAge: 60 }, 1060)).toEqual({ fresh: true, verifiedAt: 1000 })
    expect(freshnessOf({ pwd: 1000 }, { maxAge: 60 }, 1061)).toMatchObject({ fresh: false, reason: 'stale' })
  })

  it('counts only the factors the policy names, and only a second factor at aal 2', () => {
    expect(freshnessOf({ pwd: 1000 }, { factors: ['hwk'] }, 1000)).toMatchObject({ fresh: false, factors: ['hwk'] })
    expect(freshnessOf({ pwd: 1000 }, { aal: 2 }, 1000)).toMatchObject({ fresh: false, factors: ['hwk', 'otp'] })
    expect(freshnessOf({ pwd: 1000, otp: 990 }, { aal: 2 }, 1000)).toEqual({ fresh: true, verifiedAt: 990 })
  })

  it('defaults to ten minutes, and reads a negative maxAge as nothing older than now', () => {
    expect(freshnessOf({ pwd: 1000 }, {}, 1600).fresh).toBe(true)
    expect(freshnessOf({ pwd: 1000 }, {}, 1601).fresh).toBe(false)
    expect(freshnessOf({ pwd: 1000 }, { maxAge: -5 }, 1001).fresh).toBe(false)
  })

  it('refuses no session as signed out', () => {
    expect(freshnessOf(null, {}, 1)).toMatchObject({ fresh: false, reason: 'signedOut' })
  })
})

describe('requireRecentAuth', () => {
  it('lets a request through right after a sign-in (a fresh sign-in is a fresh proof)', async () => {
    const config = featureConfig()
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const result = await requireRecentAuth(appRequest(client.jar.get(SESSION_COOKIE)), config, { maxAge: 60 })
    expect(result).toEqual({ ok: true, verifiedAt: expect.any(Number) })
  })

  it('answers a fetch with an old proof with 401, WWW-Authenticate detail and the URL to open', async () => {
    const config = featureConfig()
    const token = await sealed({ fva: { pwd: now() - 3600 } })
    const result = await requireRecentAuth(appRequest(token, { accept: 'application/json' }), config, { maxAge: 300 })
    expect(result).toBeInstanceOf(Response)
    const response = result as Response
    const url = `${ORIGIN}/auth/reauthenticate?callbackUrl=${encodeURIComponent('/settings/security?tab=keys')}&factors=hwk+otp+pwd+email+fed`
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_user_authentication", max_age=300, factors="hwk otp pwd email fed", url="${url}"`,
    )
    expect(await response.json()).toEqual({ error: 'insufficient_user_authentication', maxAge: 300, factors: ['hwk', 'otp', 'pwd', 'email', 'fed'], url })
  })

  it('sends a page request with an old proof to prove a factor again, back to where it was going', async () => {
    const config = featureConfig()
    const token = await sealed({ fva: { pwd: now() - 3600 } })
    const response = (await requireRecentAuth(appRequest(token, { 'sec-fetch-mode': 'navigate', accept: 'text/html' }), config)) as Response
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe(
      `${ORIGIN}/auth/reauthenticate?callbackUrl=${encodeURIComponent('/settings/security?tab=keys')}&factors=hwk+otp+pwd+email+fed`,
    )
  })

  it('asks an Auth.js token (no fva, no auth_time) for a proof, and a signed-out request to sign in', async () => {
    const config = featureConfig()
    const legacy = (await requireRecentAuth(appRequest(await sealed({})), config)) as Response
    expect(legacy.status).toBe(401)
    expect(await legacy.json()).toMatchObject({ error: 'insufficient_user_authentication' })
    const signedOut = (await requireRecentAuth(appRequest(undefined), config)) as Response
    expect(signedOut.status).toBe(401)
    expect(await signedOut.json()).toMatchObject({ error: 'login_required' })
  })

  it('refuses a password session where the policy asks for a second factor', async () => {
    const config = featureConfig()
    const token = await sealed({ fva: { pwd: now() } })
    expect(((await requireRecentAuth(appRequest(token), config, { aal: 2 })) as Response).status).toBe(401)
    const stronger = await sealed({ fva: { pwd: now(), otp: now() } })
    expect(await requireRecentAuth(appRequest(stronger), config, { aal: 2 })).toMatchObject({ ok: true })
  })

  it('counts a session the authority refuses (past its absolute lifetime) as signed out, whatever its fva says', async () => {
    const config = featureConfig({ session: { absoluteMaxAge: 60 } })
    const token = await sealed({ auth_time: now() - 120, fva: { pwd: now() } })
    const response = (await requireRecentAuth(appRequest(token), config)) as Response
    expect(await response.json()).toMatchObject({ error: 'login_required' })
  })

  it('reads a database session through its row: fresh after sign-in, stale once its fva is old', async () => {
    const store = createMemoryStore()
    const config = featureConfig({ adapter: MemoryAdapter(store) })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const token = client.jar.get(SESSION_COOKIE)!
    expect(await requireRecentAuth(appRequest(token), config)).toMatchObject({ ok: true })
    store.sessions.get(token)!.fva = { pwd: now() - 3600 }
    expect(((await requireRecentAuth(appRequest(token), config)) as Response).status).toBe(401)
  })
})
