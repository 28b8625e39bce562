/**
 * Password sign-in through `Auth`, from the attacker's side first: an unknown address and a wrong
 * password are answered alike (content, and time as a distribution), the limits hold, the second
 * factor cannot be skipped, and the password never reaches a log line.
 */
import { describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { MemoryAdapter } from '../../adapters/memory.js'
import { authRequest, Client, ORIGIN, setCookie } from '../fixtures/http.js'
import { addUser, outdatedHash, passwordWorld, postPassword, signInWithPassword, testHasher } from './fixtures.js'
import Password from '../../providers/password.js'
import { featureConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const REJECTED = `${ORIGIN}/auth/signin?error=CredentialsSignin&code=credentials`

describe('password sign-in', () => {
  it('signs a user in with the right password, with a session the completion issued', async () => {
    const world = passwordWorld()
    const alice = await addUser(world, 'alice@example.com', 'correct horse battery')
    const client = new Client(world.config)
    const response = await signInWithPassword(client, 'Alice@Example.com ', 'correct horse battery')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(setCookie(response, SESSION_COOKIE)).toBeDefined()
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
    expect([...world.store.sessions.values()]).toEqual([expect.objectContaining({ userId: alice.id, fva: { pwd: expect.any(Number) } })])
  })

  it('answers a wrong password, an unknown address, a user without a password and a malformed address alike, with no session', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'correct horse battery')
    await addUser(world, 'oauth-only@example.com', null)
    const answers = []
    for (const [email, password] of [
      ['alice@example.com', 'wrong password here'],
      ['nobody@example.com', 'correct horse battery'],
      ['oauth-only@example.com', 'correct horse battery'],
      ['not an address', 'correct horse battery'],
    ] as const) {
      const response = await signInWithPassword(new Client(world.config), email, password)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      answers.push([response.status, response.headers.get('location'), await response.text()])
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1)
    expect(answers[0]![1]).toBe(REJECTED)
    // Every one of them verified a hash, real or dummy: the work is the same.
    expect(world.hasher.calls.verify + world.hasher.calls.dummy).toBe(4)
    expect(world.hasher.calls.dummy).toBe(3)
  })

  it('answers an unknown address in the time of a wrong password (distributions over many requests)', async () => {
    // Limits high enough that no attempt here is refused before its hash.
    const world = passwordWorld({}, { rateLimit: { credentials: { perIdentifier: 1000, perAddress: 1000 } } })
    await addUser(world, 'alice@example.com', 'correct horse battery')
    const time = async (email: string) => {
      const client = new Client(world.config)
      const started = performance.now()
      await signInWithPassword(client, email, 'wrong password here')
      return performance.now() - started
    }
    const known: number[] = []
    const unknown: number[] = []
    // Interleaved, so drift of the machine hits both alike.
    for (let i = 0; i < 30; i++) {
      known.push(await time('alice@example.com'))
      unknown.push(await time(`nobody-${i}@example.com`))
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    const [a, b] = [median(known), median(unknown)]
    // The hash dominates both; medians within 40 % of each other (an unknown address without the
    // dummy verification would answer in a fraction of the time).
    expect(Math.abs(a - b) / Math.max(a, b)).toBeLessThan(0.4)
  })

  it('refuses the right password for an unverified address with requireEmailVerification, and says so to the holder only', async () => {
    const world = passwordWorld()
    await addUser(world, 'new@example.com', 'correct horse battery', { verified: false })
    const right = await signInWithPassword(new Client(world.config), 'new@example.com', 'correct horse battery')
    expect(right.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=email_unverified`)
    expect(setCookie(right, SESSION_COOKIE)).toBeUndefined()
    const wrong = await signInWithPassword(new Client(world.config), 'new@example.com', 'not the password')
    expect(wrong.headers.get('location')).toBe(REJECTED)
  })

  it('signs an unverified address in when the application does not require the proof', async () => {
    const world = passwordWorld({ requireEmailVerification: false })
    await addUser(world, 'new@example.com', 'correct horse battery', { verified: false })
    const response = await signInWithPassword(new Client(world.config), 'new@example.com', 'correct horse battery')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(setCookie(response, SESSION_COOKIE)).toBeDefined()
  })

  it('re-hashes an outdated hash at a successful sign-in, and only then', async () => {
    const world = passwordWorld()
    const alice = await addUser(world, 'alice@example.com', null)
    const old = await outdatedHash('correct horse battery')
    await world.config.adapter!.setUserPassword!(alice.id, old)
    await signInWithPassword(new Client(world.config), 'alice@example.com', 'wrong password here')
    expect(world.store.passwords.get(alice.id)).toBe(old)
    await signInWithPassword(new Client(world.config), 'alice@example.com', 'correct horse battery')
    const fresh = world.store.passwords.get(alice.id)!
    expect(fresh).not.toBe(old)
    expect(fresh).toMatch(/^\$scrypt\$N=4096\$/)
    expect((await world.hasher.verify(fresh, 'correct horse battery')).valid).toBe(true)
  })

  it('asks verifyLegacyPassword once for a user without a local hash, then stores our own', async () => {
    const asked: string[] = []
    const world = passwordWorld({
      verifyLegacyPassword: async (user, password) => {
        asked.push(user.email)
        return password === 'legacy secret'
      },
    })
    const imported = await addUser(world, 'imported@example.com', null)
    const wrong = await signInWithPassword(new Client(world.config), 'imported@example.com', 'not it')
    expect(wrong.headers.get('location')).toBe(REJECTED)
    expect(world.store.passwords.has(imported.id)).toBe(false)
    const right = await signInWithPassword(new Client(world.config), 'imported@example.com', 'legacy secret')
    expect(right.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(world.store.passwords.has(imported.id)).toBe(true)
    const again = await signInWithPassword(new Client(world.config), 'imported@example.com', 'legacy secret')
    expect(again.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(asked).toEqual(['imported@example.com', 'imported@example.com'])
  })

  it('counts attempts against the credentials limits per address typed: past the limit no hash is verified', async () => {
    const world = passwordWorld({}, { rateLimit: { credentials: { perIdentifier: 3 } } })
    await addUser(world, 'alice@example.com', 'correct horse battery')
    for (let i = 0; i < 3; i++) await signInWithPassword(new Client(world.config), 'alice@example.com', `guess ${i} of many`)
    const verifiedBefore = world.hasher.calls.verify
    const limited = await signInWithPassword(new Client(world.config), 'ALICE@example.com', 'correct horse battery')
    expect(limited.headers.get('location')).toMatch(/error=CredentialsSignin&code=rate_limited&retryAfter=\d+/)
    expect(setCookie(limited, SESSION_COOKIE)).toBeUndefined()
    expect(world.hasher.calls.verify).toBe(verifiedBefore)
  })

  it('never writes the password to a log line or an error', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'correct horse battery')
    const client = new Client(world.config)
    await signInWithPassword(client, 'alice@example.com', 'pw-that-must-not-leak')
    await signInWithPassword(client, 'ghost@example.com', 'pw-that-must-not-leak')
    const logged = JSON.stringify(
      [world.config.logger.error, world.config.logger.warn, world.config.logger.debug].flatMap((spy) =>
        spy.mock.calls.map((call) => call.map((value) => (value instanceof Error ? `${value.message}\n${value.stack}` : value))),
      ),
    )
    expect(logged).not.toContain('pw-that-must-not-leak')
  })

  it('never passes the second factor: an enrolled user is asked for the code, with no session before it', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'correct horse battery')
    const alice = new Client(world.config)
    await signInWithPassword(alice, 'alice@example.com', 'correct horse battery')
    await alice.send({ path: '/two-factor', body: { csrfToken: await alice.csrfToken() } })
    const page = await (await alice.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    const enrolled = await alice.send({ path: '/step/totp-enrolment', body: { csrfToken: await alice.csrfToken(), code: totpCode(secret, Math.floor(Date.now() / 1000)) } })
    expect(enrolled.status).toBe(200)
    const thief = new Client(world.config)
    const response = await signInWithPassword(thief, 'alice@example.com', 'correct horse battery')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect((await thief.session()).body).toBeNull()
  })

  it('is refused at load with an adapter that cannot store passwords (an Auth.js adapter)', async () => {
    const { getUserPassword: _get, setUserPassword: _set, ...authjsAdapter } = MemoryAdapter()
    const config = featureConfig({ adapter: authjsAdapter, providers: [Password({ hasher: testHasher() })] })
    const response = await Auth(authRequest({ path: '/auth/providers' }), config)
    expect(response.status).toBe(500)
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ message: expect.stringContaining('Required adapter methods were missing: getUserPassword, setUserPassword') }),
    )
  })

  it('answers a JSON client the same places as JSON (X-Auth-Return-Redirect), as the credentials provider does', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'correct horse battery')
    const json = { 'X-Auth-Return-Redirect': '1' }
    const wrong = await postPassword(new Client(world.config), { email: 'alice@example.com', password: 'wrong password here' }, json)
    expect(await wrong.json()).toEqual({ url: REJECTED })
    const right = await postPassword(new Client(world.config), { email: 'alice@example.com', password: 'correct horse battery', callbackUrl: '/dashboard' }, json)
    expect(await right.json()).toEqual({ url: `${ORIGIN}/dashboard` })
    expect(setCookie(right, SESSION_COOKIE)).toBeDefined()
    const signUp = await postPassword(new Client(world.config), { intent: 'signup', email: 'new@example.com', password: 'a new password' }, json)
    expect(await signUp.json()).toEqual({ url: `${ORIGIN}/auth/verify-request?provider=password&type=email` })
  })

  it('is listed among the providers, and its form is on the sign-in page', async () => {
    const world = passwordWorld()
    const providers = await (await Auth(authRequest({ path: '/auth/providers' }), world.config)).json()
    expect(providers).toMatchObject({ password: { id: 'password', type: 'password', callbackUrl: `${ORIGIN}/auth/callback/password` } })
    const page = await (await new Client(world.config).send({ path: '/signin' })).text()
    expect(page).toContain(`<form action="${ORIGIN}/auth/callback/password" method="POST" data-credentials="password">`)
    expect(page).toContain('type="password"')
  })

  it('links the sign-in page to the sign-up and forgotten-password pages, keeping where the user was going', async () => {
    const client = new Client(passwordWorld().config)
    const page = await (await client.send({ path: '/signin', query: { callbackUrl: `${ORIGIN}/orders` } })).text()
    const links = [...page.matchAll(/<a href="([^"]+)">(Create an account|Forgot your password\?)<\/a>/g)].map(([, href, text]) => [text, href])
    expect(links).toHaveLength(2)
    for (const [text, href] of links) {
      const url = new URL(href!.replaceAll('&amp;', '&'))
      expect(`${url.origin}${url.pathname}`).toBe(`${ORIGIN}/auth/callback/password`)
      expect(url.searchParams.get('intent')).toBe(text === 'Create an account' ? 'signup' : 'forgot')
      expect(url.searchParams.get('callbackUrl')).toBe(`${ORIGIN}/orders`)
      const opened = await client.send({ path: url.pathname.replace('/auth', ''), query: Object.fromEntries(url.searchParams) })
      expect(opened.status).toBe(200)
      expect(await opened.text()).toContain(`<h1>${text}</h1>`)
    }
  })
})
