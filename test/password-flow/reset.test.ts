/**
 * Forgotten password through `Auth`, attacks first: every address is answered alike (content and
 * time), the reset link is single-use, short-lived, scanner-safe, bound to its purpose and user,
 * dead after a newer one, refused as any other kind of token and vice versa, the requests are
 * limited per address and per client, and a reset ends every session of the user (a thief's too).
 */
import { describe, expect, it } from 'vitest'
import { Auth, setClientAddress } from '../../core/index.js'
import Email from '../../providers/email.js'
import { authRequest, Client, ORIGIN, setCookie, setCookies } from '../fixtures/http.js'
import { addUser, passwordWorld, postPassword, signInWithPassword, type PasswordWorld } from './fixtures.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const CHECK_EMAIL = `${ORIGIN}/auth/verify-request?provider=password&type=email`
const REFUSED = `${ORIGIN}/auth/error?error=Verification`

const forgot = (world: PasswordWorld, email: string, client = new Client(world.config)) => postPassword(client, { intent: 'forgot', email })
const reset = (world: PasswordWorld, token: string, password: string, client = new Client(world.config)) =>
  postPassword(client, { intent: 'reset', token, password })

/** The token of the newest reset link sent to `to`. */
function resetToken(world: PasswordWorld, to: string): string {
  const mail = world.mailbox.filter((m) => m.to === to && m.kind === 'reset').at(-1)
  if (!mail) throw new Error(`no reset link sent to ${to}`)
  return new URL(mail.url).searchParams.get('token')!
}

async function shapeOf(response: Response) {
  return {
    status: response.status,
    location: response.headers.get('location'),
    body: await response.text(),
    cookies: setCookies(response).map((cookie) => cookie.name).sort(),
  }
}

describe('forgotten password', () => {
  it('answers a known and an unknown address alike, and sends the link only to the known one', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    const known = await shapeOf(await forgot(world, 'alice@example.com'))
    const unknown = await shapeOf(await forgot(world, 'nobody@example.com'))
    expect(known).toEqual(unknown)
    expect(known.location).toBe(CHECK_EMAIL)
    expect(world.mailbox.map((m) => [m.kind, m.to])).toEqual([
      ['reset', 'alice@example.com'],
      ['reset-unknown', 'nobody@example.com'],
    ])
    expect(world.mailbox[1]!.token).toBeUndefined()
  })

  it('answers a known address in the time of an unknown one (distributions over many requests)', async () => {
    const world = passwordWorld({ resetLimit: { perAddress: 1000, perClient: 1000 } })
    await addUser(world, 'alice@example.com', 'the old password')
    const time = async (email: string) => {
      const started = performance.now()
      await forgot(world, email)
      return performance.now() - started
    }
    const known: number[] = []
    const unknown: number[] = []
    for (let i = 0; i < 40; i++) {
      known.push(await time('alice@example.com'))
      unknown.push(await time(`nobody-${i}@example.com`))
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    const [a, b] = [median(known), median(unknown)]
    expect(Math.abs(a - b) / Math.max(a, b)).toBeLessThan(0.4)
  })

  it('sets the new password from the link: the old one stops working, the new one signs in', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    const done = await reset(world, resetToken(world, 'alice@example.com'), 'a brand new password')
    expect(done.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    const old = await signInWithPassword(new Client(world.config), 'alice@example.com', 'the old password')
    expect(setCookie(old, SESSION_COOKIE)).toBeUndefined()
    const fresh = await signInWithPassword(new Client(world.config), 'alice@example.com', 'a brand new password')
    expect(setCookie(fresh, SESSION_COOKIE)).toBeDefined()
  })

  it('opens the link on a page that spends nothing: a scanner fetching it leaves it good', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    const link = new URL(world.mailbox.at(-1)!.url)
    for (let i = 0; i < 3; i++) {
      const page = await new Client(world.config).send({ path: '/callback/password', query: Object.fromEntries(link.searchParams) })
      expect(page.status).toBe(200)
      expect(page.headers.get('referrer-policy')).toBe('no-referrer')
      expect(await page.text()).toContain('name="intent" value="reset"')
    }
    expect((await reset(world, link.searchParams.get('token')!, 'a brand new password')).headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
  })

  it('spends the link once: replayed, it is refused and sets nothing', async () => {
    const world = passwordWorld()
    const alice = await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    const token = resetToken(world, 'alice@example.com')
    await reset(world, token, 'a brand new password')
    const hash = world.store.passwords.get(alice.id)
    expect((await reset(world, token, 'the attacker password')).headers.get('location')).toBe(REFUSED)
    expect(world.store.passwords.get(alice.id)).toBe(hash)
  })

  it('gives one of two racing uses of a link the reset, never both', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    const token = resetToken(world, 'alice@example.com')
    const answers = await Promise.all([reset(world, token, 'first racing password'), reset(world, token, 'second racing password')])
    expect(answers.map((a) => a.headers.get('location')).sort()).toEqual([`${ORIGIN}/auth/error?error=Verification`, `${ORIGIN}/auth/signin`])
  })

  it('refuses an earlier link once a newer one is sent, and after a reset with the newer one', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    const first = resetToken(world, 'alice@example.com')
    await forgot(world, 'alice@example.com')
    const second = resetToken(world, 'alice@example.com')
    expect((await reset(world, first, 'from the first link')).headers.get('location')).toBe(REFUSED)
    expect((await reset(world, second, 'from the second link')).headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    expect((await reset(world, first, 'from the first link')).headers.get('location')).toBe(REFUSED)
  })

  it("binds the link to its user: Alice's link sets Alice's password and nobody else's", async () => {
    const world = passwordWorld()
    const alice = await addUser(world, 'alice@example.com', 'alice password')
    const bob = await addUser(world, 'bob@example.com', 'bob password')
    const bobHash = world.store.passwords.get(bob.id)
    await forgot(world, 'alice@example.com')
    await postPassword(new Client(world.config), { intent: 'reset', token: resetToken(world, 'alice@example.com'), password: 'chosen by alice', email: 'bob@example.com' })
    expect(world.store.passwords.get(bob.id)).toBe(bobHash)
    expect((await world.hasher.verify(world.store.passwords.get(alice.id)!, 'chosen by alice')).valid).toBe(true)
  })

  it('refuses a reset token as a verification token, and a verification token as a reset token', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    const resetLink = resetToken(world, 'alice@example.com')
    await postPassword(new Client(world.config), { intent: 'signup', email: 'new@example.com', password: 'a new password' })
    const verifyLink = new URL(world.mailbox.find((m) => m.kind === 'verify')!.url).searchParams.get('token')!
    const asVerification = await postPassword(new Client(world.config), { intent: 'verify', token: resetLink, password: 'the old password' })
    expect(asVerification.headers.get('location')).toBe(REFUSED)
    expect((await reset(world, verifyLink, 'taking over the new one')).headers.get('location')).toBe(REFUSED)
    // Both still work for what they are.
    expect((await reset(world, resetLink, 'a brand new password')).headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
  })

  it("refuses an e-mail sign-in link's token as a reset token, and a reset token as a sign-in link", async () => {
    const outbox: string[] = []
    const world = passwordWorld()
    world.config.providers.push(Email({ sendVerificationRequest: async ({ url }) => void outbox.push(url) }) as never)
    const alice = await addUser(world, 'alice@example.com', 'the old password')
    const client = new Client(world.config)
    await client.send({ path: '/signin/email', body: { email: 'alice@example.com', csrfToken: await client.csrfToken() } })
    const signInToken = new URL(outbox.at(-1)!).searchParams.get('token')!
    const hash = world.store.passwords.get(alice.id)
    expect((await reset(world, signInToken, 'through a sign-in link')).headers.get('location')).toBe(REFUSED)
    expect(world.store.passwords.get(alice.id)).toBe(hash)
    await forgot(world, 'alice@example.com')
    const asSignIn = await client.send({
      path: '/callback/email',
      body: { token: resetToken(world, 'alice@example.com'), email: 'alice@example.com', csrfToken: await client.csrfToken() },
    })
    expect(setCookie(asSignIn, SESSION_COOKIE)).toBeUndefined()
    expect(asSignIn.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
  })

  it('refuses a new password the policy refuses, and keeps the link good for a better one', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    const token = resetToken(world, 'alice@example.com')
    expect((await reset(world, token, 'short')).headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=password_too_short`)
    expect((await reset(world, token, 'long enough now')).headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
  })

  it("ends every session of the user, a thief's stale session with the old password included", async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    const alice = new Client(world.config)
    const thief = new Client(world.config)
    await signInWithPassword(alice, 'alice@example.com', 'the old password')
    await signInWithPassword(thief, 'alice@example.com', 'the old password')
    expect((await thief.session()).body).not.toBeNull()
    await forgot(world, 'alice@example.com')
    await reset(world, resetToken(world, 'alice@example.com'), 'a brand new password')
    expect((await thief.session()).body).toBeNull()
    expect((await alice.session()).body).toBeNull()
    expect(world.store.sessions.size).toBe(0)
  })

  it('ends every JWT session of the user too, on every instance sharing the store', async () => {
    const world = passwordWorld({}, { session: { strategy: 'jwt' } })
    await addUser(world, 'alice@example.com', 'the old password')
    const thief = new Client(world.config)
    await signInWithPassword(thief, 'alice@example.com', 'the old password')
    expect((await thief.session()).body).not.toBeNull()
    // A second later: the reset ends every token signed in up to its own time.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    await forgot(world, 'alice@example.com')
    await reset(world, resetToken(world, 'alice@example.com'), 'a brand new password')
    expect((await thief.session()).body).toBeNull()
  })

  it('limits reset requests per address and per client address', async () => {
    const world = passwordWorld({ resetLimit: { perAddress: 2, perClient: 3, window: 3600 } })
    await addUser(world, 'alice@example.com', 'the old password')
    for (let i = 0; i < 2; i++) expect((await forgot(world, 'alice@example.com')).headers.get('location')).toBe(CHECK_EMAIL)
    const limited = await forgot(world, 'ALICE@example.com')
    expect(limited.headers.get('location')).toMatch(/^https:\/\/authchart\.test\/auth\/signin\?error=EmailSignin&retryAfter=\d+$/)
    expect(world.mailbox.filter((m) => m.kind === 'reset')).toHaveLength(2)
    // From one client, a fourth address is refused whatever the address.
    const fromClient = async (email: string) => {
      const client = new Client(world.config)
      const csrf = await client.send({ path: '/csrf' })
      const { csrfToken } = (await csrf.json()) as { csrfToken: string }
      const request = authRequest({ path: '/auth/callback/password', body: { intent: 'forgot', email, csrfToken }, cookies: client.jar })
      return Auth(setClientAddress(request, '203.0.113.9'), world.config)
    }
    for (let i = 0; i < 3; i++) expect((await fromClient(`user-${i}@example.com`)).headers.get('location')).toBe(CHECK_EMAIL)
    expect((await fromClient('user-9@example.com')).headers.get('location')).toMatch(/error=EmailSignin&retryAfter=/)
  })

  it('never writes the new password or the reset token to a log line or an error', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    await forgot(world, 'alice@example.com')
    const token = resetToken(world, 'alice@example.com')
    await reset(world, token, 'new-pw-that-must-not-leak')
    await reset(world, token, 'new-pw-that-must-not-leak')
    const logged = JSON.stringify(
      [world.config.logger.error, world.config.logger.warn, world.config.logger.debug].flatMap((spy) =>
        spy.mock.calls.map((call) => call.map((value) => (value instanceof Error ? `${value.message}\n${value.stack}` : value))),
      ),
    )
    expect(logged).not.toContain('new-pw-that-must-not-leak')
    expect(logged).not.toContain(token)
  })
})
