/**
 * Password sign-up through `Auth`, attacks first: a known address is answered exactly as a new one
 * (content and time), the owner is told, the verification link is single-use, scanner-safe and
 * needs the password chosen at sign-up, and a sign-up made ahead of the address's owner keeps no
 * way in once the owner proves the address another way (a pre-account takeover).
 */
import { describe, expect, it } from 'vitest'
import { object, optional, string } from 'superstruct'
import Email from '../../providers/email.js'
import { Client, ORIGIN, setCookie, setCookies } from '../fixtures/http.js'
import { addUser, passwordWorld, postPassword, signInWithPassword, type PasswordWorld } from './fixtures.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const CHECK_EMAIL = `${ORIGIN}/auth/verify-request?provider=password&type=email`

function signUp(world: PasswordWorld, email: string, password: string, extra: Record<string, string> = {}) {
  return postPassword(new Client(world.config), { intent: 'signup', email, password, ...extra })
}

/** The link of the newest message of `kind` to `to`. */
function linkTo(world: PasswordWorld, to: string, kind = 'verify'): URL {
  const mail = world.mailbox.filter((m) => m.to === to && m.kind === kind).at(-1)
  if (!mail) throw new Error(`no ${kind} message to ${to}`)
  return new URL(mail.url)
}

/** Opens a verification link and confirms it with `password`, as the page's form does. */
async function confirm(world: PasswordWorld, link: URL, password: string, client = new Client(world.config)): Promise<Response> {
  const token = link.searchParams.get('token')!
  return postPassword(client, { intent: 'verify', token, password })
}

/** What a response shows a requester: status, where it sends them, its body, the cookies it sets. */
async function shapeOf(response: Response) {
  return {
    status: response.status,
    location: response.headers.get('location'),
    body: await response.text(),
    cookies: setCookies(response).map((cookie) => cookie.name).sort(),
  }
}

describe('password sign-up', () => {
  it('answers a known address exactly as a new one, and tells the owner instead of changing anything', async () => {
    const world = passwordWorld()
    const owner = await addUser(world, 'owner@example.com', 'the owner password')
    const hashBefore = world.store.passwords.get(owner.id)
    const known = await shapeOf(await signUp(world, 'owner@example.com', 'attacker password'))
    const fresh = await shapeOf(await signUp(world, 'new@example.com', 'a new password'))
    expect(known).toEqual(fresh)
    expect(known.location).toBe(CHECK_EMAIL)
    expect(world.store.passwords.get(owner.id)).toBe(hashBefore)
    expect(world.mailbox.map((mail) => [mail.kind, mail.to])).toEqual([
      ['signup-existing', 'owner@example.com'],
      ['verify', 'new@example.com'],
    ])
    // Both did one hash: the work is the same.
    expect(world.hasher.calls.hash).toBe(3)
  })

  it('answers a known address in the time of a new one (distributions over many requests)', async () => {
    const world = passwordWorld()
    await addUser(world, 'owner@example.com', 'the owner password')
    const time = async (email: string) => {
      const started = performance.now()
      await signUp(world, email, 'some long password')
      return performance.now() - started
    }
    const known: number[] = []
    const fresh: number[] = []
    for (let i = 0; i < 30; i++) {
      known.push(await time('owner@example.com'))
      fresh.push(await time(`new-${i}@example.com`))
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    const [a, b] = [median(known), median(fresh)]
    expect(Math.abs(a - b) / Math.max(a, b)).toBeLessThan(0.4)
  })

  it('creates the account unverified: no session until the address is proven, then the password signs in', async () => {
    const world = passwordWorld()
    await signUp(world, 'new@example.com', 'a new password', { name: 'New' })
    const user = [...world.store.users.values()].find((u) => u.email === 'new@example.com')!
    expect(user).toMatchObject({ name: 'New', emailVerified: null })
    const early = await signInWithPassword(new Client(world.config), 'new@example.com', 'a new password')
    expect(early.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=email_unverified`)
    const confirmed = await confirm(world, linkTo(world, 'new@example.com'), 'a new password')
    expect(confirmed.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    expect(world.store.users.get(user.id)!.emailVerified).toBeInstanceOf(Date)
    const signedIn = await signInWithPassword(new Client(world.config), 'new@example.com', 'a new password')
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
  })

  it('opens the verification link on a page that spends nothing (a mail scanner fetching it changes nothing)', async () => {
    const world = passwordWorld()
    await signUp(world, 'new@example.com', 'a new password')
    const link = linkTo(world, 'new@example.com')
    const client = new Client(world.config)
    for (let i = 0; i < 3; i++) {
      const page = await client.send({ path: '/callback/password', query: Object.fromEntries(link.searchParams) })
      expect(page.status).toBe(200)
      expect(page.headers.get('referrer-policy')).toBe('no-referrer')
      const html = await page.text()
      expect(html).toContain('name="intent" value="verify"')
      expect(html).toContain(`name="token" value="${link.searchParams.get('token')}"`)
    }
    const user = [...world.store.users.values()][0]!
    expect(world.store.users.get(user.id)!.emailVerified).toBeNull()
    expect((await confirm(world, link, 'a new password')).headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
  })

  it('spends a verification link once, and refuses it with another password, replayed, or made up', async () => {
    const world = passwordWorld()
    await signUp(world, 'new@example.com', 'a new password')
    const link = linkTo(world, 'new@example.com')
    const wrong = await confirm(world, link, 'not the password')
    expect(wrong.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
    expect((await confirm(world, link, 'a new password')).headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    const replayed = await confirm(world, link, 'a new password')
    expect(replayed.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
    const forged = await postPassword(new Client(world.config), { intent: 'verify', token: 'a'.repeat(64), password: 'a new password' })
    expect(forged.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
  })

  it("keeps an attacker's sign-up ahead of the owner from confirming: the owner opening its link cannot confirm a password they did not choose", async () => {
    const world = passwordWorld()
    await signUp(world, 'victim@example.com', 'attacker chose this')
    // The link went to the victim's mailbox; the victim opens it and types their own password.
    const link = linkTo(world, 'victim@example.com')
    const refused = await confirm(world, link, 'the victim password')
    expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
    const user = [...world.store.users.values()][0]!
    expect(world.store.users.get(user.id)!.emailVerified).toBeNull()
  })

  it("removes an attacker's pending password once the owner proves the address another way (an e-mailed sign-in link)", async () => {
    const outbox: string[] = []
    const world = passwordWorld()
    world.config.providers.push(Email({ sendVerificationRequest: async ({ url }) => void outbox.push(url) }) as never)
    await signUp(world, 'victim@example.com', 'attacker chose this')
    const user = [...world.store.users.values()][0]!
    // The victim signs in with an e-mailed link: the address is proven, by its owner.
    const victim = new Client(world.config)
    await victim.send({ path: '/signin/email', body: { email: 'victim@example.com', csrfToken: await victim.csrfToken() } })
    const signInLink = new URL(outbox.at(-1)!)
    const signedIn = await victim.send({
      path: '/callback/email',
      body: { token: signInLink.searchParams.get('token')!, email: 'victim@example.com', csrfToken: await victim.csrfToken() },
    })
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
    expect(world.store.users.get(user.id)!.emailVerified).toBeInstanceOf(Date)
    // The attacker's password, set before, is no way in, and is gone after the attempt.
    const attacker = await signInWithPassword(new Client(world.config), 'victim@example.com', 'attacker chose this')
    expect(attacker.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=credentials`)
    expect(setCookie(attacker, SESSION_COOKIE)).toBeUndefined()
    expect(world.store.passwords.has(user.id)).toBe(false)
    // Nor can the attacker's verification link confirm it now.
    const late = await confirm(world, linkTo(world, 'victim@example.com'), 'attacker chose this')
    expect(late.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
  })

  it('refuses a password the policy refuses, alike for a known and a new address', async () => {
    const world = passwordWorld({ policy: (password) => (password.includes('password') ? { ok: false, reason: 'common' } : { ok: true }) })
    await addUser(world, 'owner@example.com', 'the owner secret')
    for (const email of ['owner@example.com', 'new@example.com']) {
      expect((await signUp(world, email, 'short')).headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=password_too_short`)
      expect((await signUp(world, email, 'my password 123')).headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=password_common`)
    }
    expect(world.mailbox).toEqual([])
    expect(world.store.users.size).toBe(1)
  })

  it("validates the application's fields with its schema, and never lets one set a core field", async () => {
    const world = passwordWorld({ signUpFields: object({ company: string(), emailVerified: optional(string()) }) as never })
    const bad = await signUp(world, 'new@example.com', 'a new password', { team: 'no company given' })
    expect(bad.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=invalid_fields`)
    expect(world.store.users.size).toBe(0)
    await signUp(world, 'new@example.com', 'a new password', { company: 'Acme', emailVerified: '2020-01-01' })
    const user = [...world.store.users.values()][0]!
    expect(user).toMatchObject({ email: 'new@example.com', company: 'Acme', emailVerified: null })
  })

  it('never writes the password or the link token to a log line or an error', async () => {
    const world = passwordWorld({ send: async (mail) => Promise.reject(new Error(`SMTP refused ${mail.url}`)) })
    await signUp(world, 'new@example.com', 'pw-that-must-not-leak')
    const logged = JSON.stringify(
      [world.config.logger.error, world.config.logger.warn, world.config.logger.debug].flatMap((spy) =>
        spy.mock.calls.map((call) =>
          call.map((value) => (value instanceof Error ? `${value.message}\n${value.stack}\n${String((value as { cause?: { err?: Error } }).cause?.err?.message)}` : value)),
        ),
      ),
    )
    expect(logged).toContain('SMTP refused [redacted]')
    expect(logged).not.toContain('pw-that-must-not-leak')
    expect(logged).not.toMatch(/token=[0-9a-f]{64}/)
  })
})
