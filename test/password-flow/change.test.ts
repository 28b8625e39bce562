/**
 * A signed-in user's password through `Auth`: changed, set and removed only behind step-up and
 * only for the signed-in user (the one session authority), ending the other sessions by default
 * (a thief's stale session with the old password among them), and never removing the last way in.
 */
import { describe, expect, it } from 'vitest'
import { stepUp } from '../../core/step-up.js'
import Email from '../../providers/email.js'
import { Client, ORIGIN, setCookie } from '../fixtures/http.js'
import { addUser, passwordWorld, signInWithPassword, type PasswordWorld } from './fixtures.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'

async function settings(client: Client, body: Record<string, string>): Promise<Response> {
  return client.send({ path: '/signin/password', body: { ...body, callbackUrl: '/account', csrfToken: await client.csrfToken() } })
}

async function signedIn(world: PasswordWorld, email: string, password: string): Promise<Client> {
  const client = new Client(world.config)
  const response = await signInWithPassword(client, email, password)
  expect(setCookie(response, SESSION_COOKIE)).toBeDefined()
  return client
}

describe("a signed-in user's password", () => {
  it("changes it: the old one stops working, the user's other sessions end, this one stays", async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    const thief = await signedIn(world, 'alice@example.com', 'the old password')
    const alice = await signedIn(world, 'alice@example.com', 'the old password')
    const changed = await settings(alice, { intent: 'change', password: 'a brand new password' })
    expect(changed.headers.get('location')).toBe(`${ORIGIN}/account`)
    expect((await thief.session()).body).toBeNull()
    expect((await alice.session()).body).not.toBeNull()
    expect(setCookie(await signInWithPassword(new Client(world.config), 'alice@example.com', 'the old password'), SESSION_COOKIE)).toBeUndefined()
    expect(setCookie(await signInWithPassword(new Client(world.config), 'alice@example.com', 'a brand new password'), SESSION_COOKIE)).toBeDefined()
  })

  it('keeps the other sessions when the form says so', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    const laptop = await signedIn(world, 'alice@example.com', 'the old password')
    const phone = await signedIn(world, 'alice@example.com', 'the old password')
    await settings(phone, { intent: 'change', password: 'a brand new password', endOtherSessions: 'false' })
    expect((await laptop.session()).body).not.toBeNull()
  })

  it('asks for a recent proof first: a stale session changes nothing', async () => {
    const world = passwordWorld({}, { stepUp: stepUp({ maxAge: 0 }) })
    const user = await addUser(world, 'alice@example.com', 'the old password')
    const alice = await signedIn(world, 'alice@example.com', 'the old password')
    const hash = world.store.passwords.get(user.id)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const asked = await settings(alice, { intent: 'change', password: 'set by a thief' })
    // The re-authentication has no factor to offer a password-only user yet (it proves a password
    // through the credentials provider): refused, and nothing changed.
    expect(asked.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(world.store.passwords.get(user.id)).toBe(hash)
  })

  it('refuses a request nobody signed in makes, and sends a post without a setting to the sign-in page', async () => {
    const world = passwordWorld()
    const user = await addUser(world, 'alice@example.com', 'the old password')
    const hash = world.store.passwords.get(user.id)
    const stranger = new Client(world.config)
    const refused = await settings(stranger, { intent: 'change', password: 'set by a stranger' })
    expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(world.store.passwords.get(user.id)).toBe(hash)
    expect((await settings(stranger, {})).headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
  })

  it('sets a password for a user who has none (signed in by e-mail), and refuses to set one over an existing password', async () => {
    const outbox: string[] = []
    const world = passwordWorld()
    world.config.providers.push(Email({ sendVerificationRequest: async ({ url }) => void outbox.push(url) }) as never)
    const client = new Client(world.config)
    await client.send({ path: '/signin/email', body: { email: 'bob@example.com', csrfToken: await client.csrfToken() } })
    const link = new URL(outbox.at(-1)!)
    await client.send({ path: '/callback/email', body: { token: link.searchParams.get('token')!, email: 'bob@example.com', csrfToken: await client.csrfToken() } })
    expect((await settings(client, { intent: 'set', password: 'bob sets his own' })).headers.get('location')).toBe(`${ORIGIN}/account`)
    expect(setCookie(await signInWithPassword(new Client(world.config), 'bob@example.com', 'bob sets his own'), SESSION_COOKIE)).toBeDefined()
    const again = await settings(client, { intent: 'set', password: 'over the top of it' })
    expect(again.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
  })

  it('removes a password only while another way in remains', async () => {
    const world = passwordWorld()
    const user = await addUser(world, 'alice@example.com', 'the old password')
    const alice = await signedIn(world, 'alice@example.com', 'the old password')
    const last = await settings(alice, { intent: 'remove' })
    expect(last.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(world.store.passwords.has(user.id)).toBe(true)
    world.config.providers.push(Email({ sendVerificationRequest: async () => {} }) as never)
    const withEmail = new Client({ ...world.config })
    for (const [name, value] of alice.jar.cookies) withEmail.jar.cookies.set(name, value)
    expect((await settings(withEmail, { intent: 'remove' })).headers.get('location')).toBe(`${ORIGIN}/account`)
    expect(world.store.passwords.has(user.id)).toBe(false)
  })

  it('refuses a new password the policy refuses', async () => {
    const world = passwordWorld()
    await addUser(world, 'alice@example.com', 'the old password')
    const alice = await signedIn(world, 'alice@example.com', 'the old password')
    const short = await settings(alice, { intent: 'change', password: 'short' })
    expect(short.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=password_too_short`)
  })
})
