/**
 * A pending enrolment is confirmed only by a live session of the user who started it, and only
 * while that user has no second factor: the thief who started one with a stolen password cannot
 * finish it after the owner turned two-step verification on or signed out everywhere, a browser
 * whose session ended cannot finish it, and one enrolment never replaces another's backup codes.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, Client, ORIGIN, featureConfig } from '../fixtures/http.js'
import { stepUp } from '../../core/step-up.js'

const ENROLMENT_STEP = '/step/totp-enrolment'
const now = () => Math.floor(Date.now() / 1000)

function setup(strategy: 'jwt' | 'database') {
  const store = createMemoryStore()
  // A configured store: sign-out everywhere of JWT sessions needs one. The owner's fresh password
  // sign-in is proof enough to sign out everywhere here (by default, once she has a second factor,
  // only it would count: test/reauthenticate holds that).
  const config = featureConfig({ adapter: MemoryAdapter(store), session: { strategy }, store: memoryAuthStore(), stepUp: stepUp({ aal: 1 }) })
  return { store, config }
}

async function signedIn(config: AuthConfig): Promise<Client> {
  const client = new Client(config)
  await client.signIn({ username: 'alice', password: 'wonderland' }, { callbackUrl: '/account' })
  expect((await client.session()).body).not.toBeNull()
  return client
}

/** Starts an enrolment and reads its secret off the QR code page. */
async function startEnrolment(client: Client): Promise<string> {
  const start = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
  expect(start.headers.get('location')).toBe(`${ORIGIN}/auth${ENROLMENT_STEP}`)
  const page = await (await client.send({ path: ENROLMENT_STEP })).text()
  return /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
}

async function confirm(client: Client, secret: string, at = now()): Promise<Response> {
  return client.send({ path: ENROLMENT_STEP, body: { csrfToken: await client.csrfToken(), code: totpCode(secret, at) } })
}

const factorsOf = (store: MemoryStore) => [...store.secondFactors.values()]
const shownCodes = async (response: Response) => [...(await response.clone().text()).matchAll(/<li><code>/g)].length

async function signOutEverywhere(client: Client): Promise<void> {
  const response = await client.send({ path: '/sessions', body: { csrfToken: await client.csrfToken(), revoke: 'all' } })
  expect(response.status).toBeLessThan(400)
}

describe.each([['JWT', 'jwt' as const], ['database', 'database' as const]])('confirming an enrolment (%s sessions)', (_name, strategy) => {
  it("refuses the thief's pending enrolment once the owner has enrolled and signed out everywhere", async () => {
    const { store, config } = setup(strategy)
    const thief = await signedIn(config)
    const thiefSecret = await startEnrolment(thief)

    const owner = await signedIn(config)
    const ownerSecret = await startEnrolment(owner)
    const enrolled = await confirm(owner, ownerSecret)
    expect(await shownCodes(enrolled)).toBe(10)
    const ownerFactors = factorsOf(store)
    await signOutEverywhere(owner)

    const late = await confirm(thief, thiefSecret, now() + 30)
    expect(late.status).toBe(302)
    expect(await shownCodes(late)).toBe(0)
    // The owner's factor and backup codes are exactly as they were: nothing added, nothing replaced.
    expect(factorsOf(store)).toEqual(ownerFactors)
  })

  it("refuses the thief's pending enrolment once the owner has enrolled, even with the thief's session alive", async () => {
    const { store, config } = setup(strategy)
    const thief = await signedIn(config)
    const thiefSecret = await startEnrolment(thief)
    const owner = await signedIn(config)
    await confirm(owner, await startEnrolment(owner))
    const ownerFactors = factorsOf(store)

    const late = await confirm(thief, thiefSecret, now() + 30)
    expect(late.headers.get('location')).toBe(`${ORIGIN}/account`)
    expect(await shownCodes(late)).toBe(0)
    expect(factorsOf(store)).toEqual(ownerFactors)
  })

  it('refuses a confirmation after the session ended: nothing stored, no backup codes shown', async () => {
    const { store, config } = setup(strategy)
    const client = await signedIn(config)
    const secret = await startEnrolment(client)
    const enrolment = [...client.jar.cookies].find(([name]) => name.endsWith('totp-enrolment'))!
    await client.signOut()
    client.jar.cookies.set(enrolment[0], enrolment[1])

    const late = await confirm(client, secret)
    expect(late.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(await shownCodes(late)).toBe(0)
    expect(factorsOf(store)).toEqual([])
  })

  it('refuses a confirmation after sign-out everywhere, from the very browser that started it', async () => {
    const { store, config } = setup(strategy)
    const client = await signedIn(config)
    const secret = await startEnrolment(client)
    await signOutEverywhere(await signedIn(config))

    const late = await confirm(client, secret)
    expect(late.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(await shownCodes(late)).toBe(0)
    expect(factorsOf(store)).toEqual([])
  })
})

describe('the enrolment cookie in another browser', () => {
  it('is refused when another user is signed in there', async () => {
    const { store, config } = setup('database')
    const alice = await signedIn(config)
    const secret = await startEnrolment(alice)
    const enrolment = [...alice.jar.cookies].find(([name]) => name.endsWith('totp-enrolment'))!
    store.users.set('u-bob', { id: 'u-bob', email: 'bob@example.com', emailVerified: null })
    await MemoryAdapter(store).createSession({ sessionToken: 'bob-session', userId: 'u-bob', expires: new Date(Date.now() + 3_600_000) })
    const bob = new Client(config)
    bob.jar.cookies.set('__Secure-authjs.session-token', 'bob-session')
    bob.jar.cookies.set(enrolment[0], enrolment[1])
    const late = await confirm(bob, secret)
    expect(late.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(factorsOf(store)).toEqual([])
  })
})

describe('two enrolments of one user', () => {
  it('store one factor and one set of backup codes when both are confirmed at the same moment', async () => {
    const { store, config } = setup('database')
    const first = await signedIn(config)
    const second = await signedIn(config)
    const [a, b] = [await startEnrolment(first), await startEnrolment(second)]
    const [ca, cb] = await Promise.all([
      (async () => Auth(authRequest({ path: `/auth${ENROLMENT_STEP}`, body: { csrfToken: await first.csrfToken(), code: totpCode(a, now()) }, cookies: first.jar }), config))(),
      (async () => Auth(authRequest({ path: `/auth${ENROLMENT_STEP}`, body: { csrfToken: await second.csrfToken(), code: totpCode(b, now()) }, cookies: second.jar }), config))(),
    ])
    expect([await shownCodes(ca), await shownCodes(cb)].sort()).toEqual([0, 10])
    expect(factorsOf(store).map((f) => f.type).sort()).toEqual(['backup-codes', 'totp'])
  })

  it("never replace the first enrolment's backup codes", async () => {
    const { store, config } = setup('database')
    const first = await signedIn(config)
    const second = await signedIn(config)
    const secondSecret = await startEnrolment(second)
    const done = await confirm(first, await startEnrolment(first))
    const codes = [...(await done.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!)
    const backup = factorsOf(store).find((f) => f.type === 'backup-codes')!
    await confirm(second, secondSecret, now() + 30)
    expect(factorsOf(store).find((f) => f.type === 'backup-codes')).toEqual(backup)
    // The first enrolment's codes still sign in.
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const step = await client.send({ path: '/step/signin-completion', body: { csrfToken: await client.csrfToken(), code: codes[0]! } })
    expect(step.headers.get('location')).toBe(`${ORIGIN}`)
  })
})
