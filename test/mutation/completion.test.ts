/**
 * The sign-in completion's second-factor gate and the step routes through `Auth`, on the memory
 * adapter and store (fast enough to run for every mutant of the completion group): the code asked
 * after the password, what a session records of the factors, wrong, spent and locked codes, the
 * step pages and their answers, and the two-step settings.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { decode } from '../../core/jwt.js'
import { CLEAN_CLIENT_CODES, MAX_CODE_ATTEMPTS, MAX_USER_ATTEMPTS, USER_LOCK_SLOT } from '../../core/second-factor/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import type { AuthConfig } from '../../core/types.js'
import { ALICE, Client, ORIGIN, SECRET, testConfig, featureConfig } from '../fixtures/http.js'
import { stepUp } from '../../core/step-up.js'

const STEP = '/step/signin-completion'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const now = () => Math.floor(Date.now() / 1000)
/** The app's code a step ahead: enrolment spends the current one. */
const nextCode = (secret: string) => totpCode(secret, now() + 30)

function setup(strategy: 'jwt' | 'database' = 'database') {
  const store = createMemoryStore()
  const config = featureConfig({ adapter: MemoryAdapter(store), session: { strategy }, stepUp: stepUp({ aal: 1 }) })
  return { store, config }
}

async function signIn(client: Client): Promise<Response> {
  return client.signIn({ username: 'alice', password: 'wonderland' }, { callbackUrl: '/dashboard' })
}

/** Alice, enrolled (her app's secret and backup codes) and signed out again. */
async function enrolled(strategy: 'jwt' | 'database' = 'database'): Promise<{ store: MemoryStore; config: AuthConfig & { logger: ReturnType<typeof testConfig>['logger'] }; secret: string; codes: string[] }> {
  const { store, config } = setup(strategy)
  const client = new Client(config)
  await signIn(client)
  await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
  const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
  const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
  const done = await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } })
  const codes = [...(await done.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!)
  expect(codes).toHaveLength(10)
  await client.signOut()
  return { store, config, secret, codes }
}

async function answer(client: Client, code: string): Promise<Response> {
  return client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), code } })
}

const jwtOf = (client: Client) => decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })

afterEach(() => {
  vi.useRealTimers()
})

describe('the second factor after the password', () => {
  it('database sessions: no session until the right code, then one recording pwd and otp', async () => {
    const { store, config, secret } = await enrolled()
    const client = new Client(config)
    expect((await signIn(client)).headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    const wrong = await answer(client, nextCode(secret) === '000000' ? '111111' : '000000')
    expect(wrong.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    const page = await (await client.send({ path: STEP })).text()
    expect(page).toContain('That code is not right.')
    expect((await answer(client, nextCode(secret))).headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(store.sessions.get(client.jar.get(SESSION_COOKIE)!)!.amr).toEqual(['pwd', 'otp'])
  })

  it('JWT sessions: amr and aal 2 with the code, a backup code recorded as such', async () => {
    const { config, secret, codes } = await enrolled('jwt')
    const client = new Client(config)
    await signIn(client)
    await answer(client, nextCode(secret))
    expect(await jwtOf(client)).toMatchObject({ sub: ALICE.id, amr: ['pwd', 'otp'], aal: 2 })
    await client.signOut()
    await signIn(client)
    await answer(client, codes[0]!)
    expect(await jwtOf(client)).toMatchObject({ amr: ['pwd', 'backup'], aal: 2 })
  })

  it('a user without a second factor: a session at once, recording no factors (JWT and database)', async () => {
    for (const strategy of ['jwt', 'database'] as const) {
      const { store, config } = setup(strategy)
      const client = new Client(config)
      expect((await signIn(client)).headers.get('location')).toBe(`${ORIGIN}/dashboard`)
      if (strategy === 'jwt') {
        const token = (await jwtOf(client))!
        expect(token).not.toHaveProperty('amr')
        expect(token).not.toHaveProperty('aal')
      } else {
        expect(store.sessions.get(client.jar.get(SESSION_COOKIE)!)!.amr).toBeUndefined()
      }
    }
  })

  it(`gives up after ${MAX_CODE_ATTEMPTS} wrong codes: AccessDenied, a warning, no session`, async () => {
    const { config, secret } = await enrolled()
    const client = new Client(config)
    await signIn(client)
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) await answer(client, '000000')
    const last = await answer(client, '000000')
    expect(last.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(config.logger.warn).toHaveBeenCalledWith('second-factor-attempts-exhausted')
    expect((await answer(client, nextCode(secret))).headers.get('location')).not.toBe(`${ORIGIN}/dashboard`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it("once the user's codes are spent, says so on the step page and in the log, and keeps waiting", async () => {
    // The whole test within one minute: the late check is one per minute.
    vi.useFakeTimers({ toFake: ['Date'], now: (Math.ceil(now() / USER_LOCK_SLOT) * USER_LOCK_SLOT + 1) * 1000 })
    const { config, secret } = await enrolled()
    // The user's codes and this client's own spent from other sign-ins, then this minute's late check taken.
    for (let i = 0; i < Math.ceil((MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES) / 2); i++) {
      const guesser = new Client(config)
      await signIn(guesser)
      await answer(guesser, '000000')
      await answer(guesser, '000000')
    }
    const late = new Client(config)
    await signIn(late)
    await answer(late, '000000')
    const owner = new Client(config)
    await signIn(owner)
    const locked = await answer(owner, nextCode(secret))
    expect(locked.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(owner.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(await (await owner.send({ path: STEP })).text()).toContain('Someone who knows your password is trying codes')
    expect(config.logger.debug).toHaveBeenCalledWith('second-factor code not checked: the user is locked', {
      retryAfter: expect.any(Number),
    })
    const [, { retryAfter }] = config.logger.debug.mock.calls.find(([message]) => message === 'second-factor code not checked: the user is locked') as [string, { retryAfter: number }]
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(USER_LOCK_SLOT)
  })
})

describe('the step routes', () => {
  it('serve the step page unframed and uncached, to the browser holding the flow only', async () => {
    const { config } = await enrolled()
    const client = new Client(config)
    await signIn(client)
    const page = await client.send({ path: STEP })
    expect(page.status).toBe(200)
    expect(Object.fromEntries(page.headers)).toMatchObject({
      'content-type': 'text/html',
      'cache-control': 'private, no-cache, no-store',
      'content-security-policy': expect.stringMatching(/; frame-ancestors 'none'$/),
      'x-frame-options': 'DENY',
    })
    const html = await page.text()
    expect(html).toContain(`action="${ORIGIN}/auth${STEP}"`)
    expect(html).toContain(`name="csrfToken" value="${await client.csrfToken()}"`)
    const stranger = await new Client(config).send({ path: STEP })
    expect(stranger.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    // No flow cookie at all is not an unusable flow: nothing to log.
    expect(config.logger.debug).not.toHaveBeenCalledWith('step page for an unusable flow', expect.anything())
  })

  it('send a browser with a flow cookie nobody can open back to sign in, saying why in the log', async () => {
    const { config } = setup()
    const client = new Client(config)
    client.jar.cookies.set('__Secure-authchart.flow.signin-completion', 'not-a-sealed-flow')
    const page = await client.send({ path: STEP })
    expect(page.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    expect(config.logger.debug).toHaveBeenCalledWith('step page for an unusable flow', expect.objectContaining({ flow: 'signin-completion' }))
  })

  it('refuse an answer naming an event the step does not take, or without its field; take the one it names', async () => {
    const { config, secret } = await enrolled()
    const waiting = async () => {
      const client = new Client(config)
      await signIn(client)
      return { client, csrfToken: await client.csrfToken() }
    }
    const other = await waiting()
    expect((await other.client.send({ path: STEP, body: { csrfToken: other.csrfToken, event: 'signin.verified', code: nextCode(secret) } })).status).toBe(400)
    const empty = await waiting()
    expect((await empty.client.send({ path: STEP, body: { csrfToken: empty.csrfToken } })).status).toBe(400)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: 'Invalid input at code' }))
    expect(other.client.jar.get(SESSION_COOKIE) ?? empty.client.jar.get(SESSION_COOKIE)).toBeUndefined()
    const named = await waiting()
    const taken = await named.client.send({ path: STEP, body: { csrfToken: named.csrfToken, event: 'secondFactor.submit', code: nextCode(secret) } })
    expect(taken.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
  })

  it('answer an unknown flow with 404', async () => {
    const { config } = setup()
    expect((await new Client(config).send({ path: '/step/no-such-flow' })).status).toBe(404)
  })

  it('show the backup codes once, unframed, with a link back', async () => {
    const { config } = setup()
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' }, { callbackUrl: '/account' })
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    const done = await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } })
    expect(done.headers.get('x-frame-options')).toBe('DENY')
    expect(done.headers.get('cache-control')).toBe('private, no-cache, no-store')
    expect(await done.text()).toContain(`href="${ORIGIN}/account"`)
  })
})

describe('the two-step settings', () => {
  it('send a signed-out browser to sign in and back, to see them or to change them', async () => {
    const { store, config } = setup()
    const back = `${ORIGIN}/auth/signin?${new URLSearchParams({ callbackUrl: `${ORIGIN}/auth/two-factor` })}`
    const client = new Client(config)
    expect((await client.send({ path: '/two-factor' })).headers.get('location')).toBe(back)
    expect((await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })).headers.get('location')).toBe(back)
    expect((await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken(), action: 'disable' } })).headers.get('location')).toBe(back)
    expect([...store.secondFactors.values()]).toEqual([])
  })

  it('say off without the app factor, and count no backup code once all are spent', async () => {
    const { store, config, secret } = await enrolled()
    const client = new Client(config)
    await signIn(client)
    await answer(client, nextCode(secret))
    const backup = [...store.secondFactors.values()].find((f) => f.type === 'backup-codes')!
    store.secondFactors.set(backup.id, { ...backup, secret: '' })
    expect(await (await client.send({ path: '/two-factor' })).text()).toContain('0 backup codes left')
    for (const factor of store.secondFactors.values()) if (factor.type === 'totp') store.secondFactors.delete(factor.id)
    expect(await (await client.send({ path: '/two-factor' })).text()).toContain('<strong>off</strong>')
  })

  it('say off, then on with the backup codes left, unframed', async () => {
    const { config, secret, codes } = await enrolled()
    const fresh = setup()
    const off = new Client(fresh.config)
    await signIn(off)
    expect(await (await off.send({ path: '/two-factor' })).text()).toContain('<strong>off</strong>')

    const client = new Client(config)
    await signIn(client)
    await answer(client, codes[0]!)
    const settings = await client.send({ path: '/two-factor' })
    expect(settings.headers.get('x-frame-options')).toBe('DENY')
    const html = await settings.text()
    expect(html).toContain('<strong>on</strong>')
    expect(html).toContain('9 backup codes left')
    expect(html).toContain(`action="${ORIGIN}/auth/two-factor"`)
    expect(secret).toBeDefined()
  })

  it('turn it off for the signed-in user only, and go back to the settings', async () => {
    const { store, config, secret } = await enrolled()
    const client = new Client(config)
    await signIn(client)
    await answer(client, nextCode(secret))
    const off = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken(), action: 'disable' } })
    expect(off.headers.get('location')).toBe(`${ORIGIN}/auth/two-factor`)
    expect([...store.secondFactors.values()]).toEqual([])
    expect(await (await client.send({ path: '/two-factor' })).text()).toContain('<strong>off</strong>')
  })
})
