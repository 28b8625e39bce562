/**
 * Two-step verification end to end through `Auth`: turning it on (QR code, confirming code, backup
 * codes shown once), then signing in with credentials, with OIDC at the real test provider, with an
 * e-mail link or code and with a passkey, answering with the app's code or a backup code. And what an attacker tries: no code, wrong codes
 * replayed on an old flow cookie, one valid code sent ten times at once, a spent backup code, a
 * step posted without its CSRF token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import { MAX_CODE_ATTEMPTS } from '../../core/second-factor/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { ALICE, authRequest, Client, ORIGIN, SECRET, testConfig, featureConfig } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { EmailClient, emailConfig, lastLink } from '../email/helpers.js'
import { PasskeyBrowser, passkeyConfig } from '../webauthn/helpers.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const STEP = '/step/signin-completion'
const now = () => Math.floor(Date.now() / 1000)
/**
 * The app's code one time step ahead (accepted: one step of drift each way). Enrolment spends the
 * current step's code, so a sign-in right after it, in the same 30 seconds, needs the next one.
 */
const nextCode = (secret: string) => totpCode(secret, now() + 30)

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
})
afterAll(() => op?.close())

interface Setup {
  store: MemoryStore
  config: AuthConfig & { logger: ReturnType<typeof testConfig>['logger'] }
}

function setup(overrides: Partial<AuthConfig> = {}): Setup {
  const store = createMemoryStore()
  const config = featureConfig({
    adapter: MemoryAdapter(store),
    providers: [
      ...featureConfig().providers,
      appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'] }),
    ] as never,
    ...overrides,
  })
  return { store, config }
}

/** Turns two-step verification on for a signed-in client; returns the secret and backup codes. */
async function enrol(client: Client): Promise<{ secret: string; codes: string[] }> {
  const start = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
  expect(start.headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)
  const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
  expect(page).toContain('<svg')
  const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
  const done = await client.send({
    path: '/step/totp-enrolment',
    body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) },
  })
  expect(done.status).toBe(200)
  const codes = [...(await done.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!)
  expect(codes).toHaveLength(10)
  return { secret, codes }
}

async function signInWithPassword(client: Client): Promise<Response> {
  return client.signIn({ username: 'alice', password: 'wonderland' }, { callbackUrl: '/dashboard' })
}

async function answer(client: Client, code: string, csrfToken?: string): Promise<Response> {
  return client.send({ path: STEP, body: { csrfToken: csrfToken ?? (await client.csrfToken()), code } })
}

/** An enrolled user who has signed out again. */
async function enrolledUser(overrides: Partial<AuthConfig> = {}) {
  const { store, config } = setup(overrides)
  const first = new Client(config)
  await signInWithPassword(first)
  const enrolment = await enrol(first)
  await first.signOut()
  return { store, config, ...enrolment }
}

describe('turning on two-step verification', () => {
  it('stores the secret encrypted and the backup codes as hashes, and shows the codes once', async () => {
    const { store, config } = setup()
    const client = new Client(config)
    await signInWithPassword(client)
    const { secret, codes } = await enrol(client)
    const factors = [...store.secondFactors.values()]
    expect(factors.map((f) => f.type).sort()).toEqual(['backup-codes', 'totp'])
    const stored = JSON.stringify(factors)
    expect(stored).not.toContain(secret)
    for (const code of codes) expect(stored).not.toContain(code)
    // The settings page says it is on; the codes are not shown again.
    const settings = await (await client.send({ path: '/two-factor' })).text()
    expect(settings).toContain('<strong>on</strong>')
    expect(settings).toContain('10 backup codes left')
    expect(settings).not.toContain(codes[0]!)
  })

  it('keeps the enrolment cookie within the browser limit: the QR code is rendered at page time, not sealed', async () => {
    const { config } = setup()
    const client = new Client(config)
    await signInWithPassword(client)
    const start = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    const enrolment = start.headers.getSetCookie().find((c) => c.startsWith('__Secure-authchart.flow.totp-enrolment='))!
    // Browsers drop a cookie over 4,096 bytes (name, value and attributes): the QR code made it 6,400.
    expect(enrolment.length).toBeLessThanOrEqual(4096)
    const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
    expect(page).toContain('<svg')
    expect(page).toMatch(/<code class="secret">[A-Z2-7]{32}<\/code>/)
  })

  it('shows the key of a pending enrolment to its own signed-in user only', async () => {
    const { config } = setup()
    const client = new Client(config)
    await signInWithPassword(client)
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    const enrolment = [...client.jar.cookies].find(([name]) => name.endsWith('totp-enrolment'))!
    // Another browser holding the enrolment cookie but no session of that user sees no key.
    const other = new Client(config)
    other.jar.cookies.set(enrolment[0], enrolment[1])
    const page = await other.send({ path: '/step/totp-enrolment' })
    expect(page.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    expect(await page.text()).not.toContain('class="secret"')
  })

  it('sends a signed-out user to sign in first', async () => {
    const { config } = setup()
    const client = new Client(config)
    const response = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    expect(response.headers.get('location')).toBe(
      `${ORIGIN}/auth/signin?${new URLSearchParams({ callbackUrl: `${ORIGIN}/auth/two-factor` })}`,
    )
  })

  it('refuses a wrong confirming code, and gives up after the limit even with the first flow cookie replayed', async () => {
    const { store, config } = setup()
    const client = new Client(config)
    await signInWithPassword(client)
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    for (let attempt = 1; attempt < MAX_CODE_ATTEMPTS; attempt++) {
      const wrong = await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: '000000' } })
      expect(wrong.headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)
    }
    const last = await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: '000000' } })
    expect(last.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(store.secondFactors.size).toBe(0)
  })

  it('does not let the confirming code also sign in', async () => {
    const { config } = setup()
    const client = new Client(config)
    await signInWithPassword(client)
    const start = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    expect(start.status).toBe(302)
    const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    const code = totpCode(secret, now())
    await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code } })
    await client.signOut()
    await signInWithPassword(client)
    const replayed = await answer(client, code)
    expect(replayed.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })
})

describe('signing in with two-step verification', () => {
  it('asks for a code after the password and issues the session only with the right one (database sessions)', async () => {
    const { store, config, secret } = await enrolledUser()
    const client = new Client(config)
    const afterPassword = await signInWithPassword(client)
    expect(afterPassword.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect((await client.session()).body).toBeNull()
    const page = await client.send({ path: STEP })
    expect(page.status).toBe(200)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(await page.text()).toContain('Two-step verification')
    const done = await answer(client, nextCode(secret))
    expect(done.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    const row = store.sessions.get(client.jar.get(SESSION_COOKIE)!)!
    expect(row.amr).toEqual(['pwd', 'otp'])
  })

  it('records pwd and otp, assurance level 2, in a JWT session', async () => {
    const { config, secret } = await enrolledUser({ session: { strategy: 'jwt' } })
    const client = new Client(config)
    await signInWithPassword(client)
    await answer(client, nextCode(secret))
    const token = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ sub: ALICE.id, amr: ['pwd', 'otp'], aal: 2 })
  })

  it('asks an OIDC user for the code too: no way of signing in skips the gate', async () => {
    const { store, config } = setup()
    const first = new Client(config)
    await signInThroughProvider(first, 'op')
    const { secret } = await enrol(first)
    await first.signOut()
    const client = new Client(config)
    const { callback } = await signInThroughProvider(client, 'op', { callbackUrl: '/dashboard' })
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    await answer(client, nextCode(secret))
    expect(store.sessions.get(client.jar.get(SESSION_COOKIE)!)?.amr).toEqual(['fed', 'otp'])
  })

  it('asks an e-mail user for the code too, after the link and after the one-time code', async () => {
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const first = new EmailClient(config)
    await first.requestLink('reader@example.com')
    await first.confirm(lastLink(outbox))
    const { secret, codes } = await enrol(first)
    await first.signOut()

    const byLink = new EmailClient(config)
    await byLink.requestLink('reader@example.com')
    const afterLink = await byLink.confirm(lastLink(outbox))
    expect(afterLink.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(byLink.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect((await byLink.session()).body).toBeNull()
    await answer(byLink, nextCode(secret))
    const token = await decode({ token: byLink.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ email: 'reader@example.com', amr: ['email', 'otp'], aal: 2 })

    const byCode = new EmailClient(config)
    await byCode.requestLink('reader@example.com')
    const afterCode = await byCode.enterCode(outbox.at(-1)!.code!)
    expect(afterCode.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(byCode.jar.get(SESSION_COOKIE)).toBeUndefined()
    const wrong = await answer(byCode, nextCode(secret) === '000000' ? '111111' : '000000')
    expect(wrong.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(byCode.jar.get(SESSION_COOKIE)).toBeUndefined()
    // The app's code of this time step is spent (by the link's sign-in); a backup code still works.
    expect((await answer(byCode, nextCode(secret))).headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    await answer(byCode, codes[0]!)
    const coded = await decode({ token: byCode.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(coded).toMatchObject({ email: 'reader@example.com', amr: ['email', 'backup'], aal: 2 })
  })

  it('asks a passkey user for the code too: the passkey alone is not the session', async () => {
    const { store, ...rest } = { store: createMemoryStore() }
    const config = passkeyConfig(store, rest)
    const browser = new PasskeyBrowser(config)
    await browser.register({ email: 'pat@example.com' })
    const { secret, codes } = await enrol(browser.client)
    await browser.client.signOut()

    const afterPasskey = await browser.signIn()
    expect(afterPasskey.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(browser.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(await browser.session()).toBeNull()
    await answer(browser.client, nextCode(secret))
    expect(store.sessions.get(browser.jar.get(SESSION_COOKIE)!)?.amr).toEqual(['hwk', 'otp'])

    // A backup code completes a passkey sign-in as well.
    await browser.client.signOut()
    await browser.signIn()
    await answer(browser.client, codes[0]!)
    expect(store.sessions.get(browser.jar.get(SESSION_COOKIE)!)?.amr).toEqual(['hwk', 'backup'])
  })

  it('accepts each backup code once', async () => {
    const { config, codes } = await enrolledUser()
    const client = new Client(config)
    await signInWithPassword(client)
    const done = await answer(client, codes[3]!.toUpperCase())
    expect(done.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    await client.signOut()
    await signInWithPassword(client)
    const again = await answer(client, codes[3]!)
    expect(again.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    const settings = await (await Auth(authRequest({ path: '/auth/two-factor', cookies: client.jar }), config)).text()
    expect(settings).not.toContain('backup code') // signed out: sent to sign in
  })

  it('issues exactly one session when one valid code is sent ten times at once', async () => {
    const { store, config, secret } = await enrolledUser()
    const client = new Client(config)
    await signInWithPassword(client)
    const csrfToken = await client.csrfToken()
    const code = nextCode(secret)
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        Auth(authRequest({ path: `/auth${STEP}`, body: { csrfToken, code }, cookies: client.jar }), config),
      ),
    )
    const signedIn = responses.filter((r) => r.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !c.includes('Max-Age=0')))
    expect(signedIn).toHaveLength(1)
    expect(store.sessions.size).toBe(1)
  })

  it('keeps counting wrong codes when every attempt replays the same earlier flow cookie', async () => {
    // Envelopes are single-use through the store; a store that cannot enforce that (another
    // instance that never saw them) must still not give replays fresh guesses.
    const shared = memoryAuthStore()
    const forgetful: AuthStore = { ...shared, claim: async () => true }
    const { config, secret } = await enrolledUser({ store: forgetful })
    const client = new Client(config)
    await signInWithPassword(client)
    const envelope = [...client.jar.cookies].find(([name]) => name.endsWith('signin-completion'))!
    for (let attempt = 1; attempt <= MAX_CODE_ATTEMPTS; attempt++) {
      client.jar.cookies.set(envelope[0], envelope[1])
      await answer(client, '000000')
    }
    client.jar.cookies.set(envelope[0], envelope[1])
    const right = await answer(client, nextCode(secret))
    expect(right.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(config.logger.warn).toHaveBeenCalledWith('second-factor-attempts-exhausted')
  })

  it('refuses a replayed flow cookie once it has been answered', async () => {
    const { config, secret } = await enrolledUser()
    const client = new Client(config)
    await signInWithPassword(client)
    const envelope = [...client.jar.cookies].find(([name]) => name.endsWith('signin-completion'))!
    const signedIn = await answer(client, nextCode(secret))
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    const attacker = new Client(config)
    attacker.jar.cookies.set(envelope[0], envelope[1])
    const replay = await answer(attacker, nextCode(secret))
    expect(replay.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(attacker.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('refuses an answer without the CSRF token, and one naming an event the step does not take', async () => {
    const { config, secret } = await enrolledUser()
    const client = new Client(config)
    await signInWithPassword(client)
    const noCsrf = await client.send({ path: STEP, body: { code: totpCode(secret, now()) } })
    expect(noCsrf.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    const otherEvent = await client.send({
      path: STEP,
      body: { csrfToken: await client.csrfToken(), event: 'signin.verified', code: totpCode(secret, now()) },
    })
    expect(otherEvent.status).toBe(400)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('sends a browser without a waiting sign-in back to the sign-in page', async () => {
    const { config } = setup()
    const client = new Client(config)
    const page = await client.send({ path: STEP })
    expect(page.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    const unknown = await client.send({ path: '/step/no-such-flow' })
    expect(unknown.status).toBe(404)
  })
})
