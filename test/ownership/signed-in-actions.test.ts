/**
 * Two users and the paths that act for a signed-in user, from Alice's side: her two-step settings,
 * her passkeys and the provider accounts she links are hers, and none of them reaches Bob: she
 * never sees or changes Bob's second factor, never finishes Bob's enrolment (nor he hers), never
 * adds a passkey to Bob, and never links an account to Bob, whatever her requests name. One
 * deployment: credentials, passkeys and an OpenID provider (the local `oidc-provider`) over the
 * memory adapter, database sessions.
 */
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { AuthConfig } from '../../core/types.js'
import { totpCode } from '../../core/second-factor/totp.js'
import Credentials from '../../providers/credentials.js'
import Passkey from '../../providers/passkey.js'
import { Client, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { PasskeyBrowser } from '../webauthn/helpers.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const ENROLMENT_COOKIE = '__Secure-authchart.flow.totp-enrolment'
const ENROLMENT_STEP = '/step/totp-enrolment'

/** Bob's address is the one the provider's account carries: an account "for Bob" by its address. */
const PEOPLE = {
  alice: { name: 'Alice', email: 'alice@wonderland.example', password: 'wonderland' },
  bob: { name: 'Bob', email: OP_ACCOUNT.email.toLowerCase(), password: 'builder' },
} as const
type Person = keyof typeof PEOPLE

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
})
afterAll(() => op?.close())

function deployment(store: MemoryStore = createMemoryStore()) {
  const config: AuthConfig = {
    secret: SECRET,
    secondFactor: totp(),
    stepUp: stepUp(),
    trustHost: true,
    logger: spyLogger(),
    adapter: MemoryAdapter(store),
    session: { strategy: 'database' },
    experimental: { enableWebAuthn: true },
    providers: [
      Credentials({
        credentials: { username: {}, password: { type: 'password' } },
        authorize: ({ username, password }) => {
          const person = PEOPLE[String(username) as Person]
          return person && person.password === password ? { id: String(username), name: person.name, email: person.email } : null
        },
      }),
      Passkey(),
      // Even with linking by address allowed, a signed-in user's sign-in links to that user.
      appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'], allowDangerousEmailAccountLinking: true }),
    ] as never,
  }
  const userOf = async (person: Person) => (await MemoryAdapter(store).getUserByEmail(PEOPLE[person].email))!
  return { store, config, userOf }
}

async function signIn(client: Client, person: Person): Promise<void> {
  const response = await client.signIn({ username: person, password: PEOPLE[person].password })
  expect(response.headers.get('location')).toBe(ORIGIN)
  expect(((await client.session()).body as { user?: { email?: string } } | null)?.user?.email).toBe(PEOPLE[person].email)
}

async function signedIn(config: AuthConfig, person: Person): Promise<Client> {
  const client = new Client(config)
  await signIn(client, person)
  return client
}

const emailOf = async (client: Client) => ((await client.session()).body as { user?: { email?: string } } | null)?.user?.email ?? null

/** Starts an enrolment at `/two-factor` (with `extra` fields) and reads its secret off the page. */
async function startEnrolment(client: Client, extra: Record<string, string> = {}): Promise<string> {
  const start = await client.send({ path: '/two-factor', body: { ...extra, csrfToken: await client.csrfToken() } })
  expect(start.headers.get('location')).toBe(`${ORIGIN}/auth${ENROLMENT_STEP}`)
  const page = await (await client.send({ path: ENROLMENT_STEP })).text()
  return /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
}

async function confirmEnrolment(client: Client, secret: string, extra: Record<string, string> = {}): Promise<Response> {
  const code = totpCode(secret, Math.floor(Date.now() / 1000))
  return client.send({ path: ENROLMENT_STEP, body: { ...extra, code, csrfToken: await client.csrfToken() } })
}

async function settingsPage(client: Client): Promise<string> {
  const page = await client.send({ path: '/two-factor' })
  expect(page.status).toBe(200)
  return page.text()
}

const factorsOf = (store: MemoryStore, userId: string) => [...store.secondFactors.values()].filter((f) => f.userId === userId)

describe("two users' two-step settings", () => {
  it("show Alice her own state, never Bob's, before and after Bob turns it on", async () => {
    const { config } = deployment()
    const alice = await signedIn(config, 'alice')
    const bob = await signedIn(config, 'bob')
    expect(await confirmEnrolment(bob, await startEnrolment(bob))).toHaveProperty('status', 200)
    expect(await settingsPage(bob)).toContain('Two-step verification is <strong>on</strong>. 10 backup codes left.')
    expect(await settingsPage(alice)).toContain('Two-step verification is <strong>off</strong>.')
  })

  it("store Alice's enrolment under Alice, whatever her requests name, and leave Bob's factor and codes as they were", async () => {
    const { store, config, userOf } = deployment()
    const bob = await signedIn(config, 'bob')
    await confirmEnrolment(bob, await startEnrolment(bob))
    const bobId = (await userOf('bob')).id
    const bobsFactors = structuredClone(factorsOf(store, bobId))
    expect(bobsFactors.map((f) => f.type).sort()).toEqual(['backup-codes', 'totp'])

    const alice = await signedIn(config, 'alice')
    const naming = { userId: bobId, user: bobId, sub: bobId, email: PEOPLE.bob.email }
    const secret = await startEnrolment(alice, naming)
    const confirmed = await confirmEnrolment(alice, secret, naming)
    expect(confirmed.status).toBe(200)
    const aliceId = (await userOf('alice')).id
    expect(factorsOf(store, aliceId).map((f) => f.type).sort()).toEqual(['backup-codes', 'totp'])
    expect(factorsOf(store, bobId)).toEqual(bobsFactors)

    // Bob signs in with his own code, not Alice's: his factor is his.
    const again = new Client(config)
    const first = await again.signIn({ username: 'bob', password: PEOPLE.bob.password })
    expect(first.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
    const withAlicesCode = await again.send({
      path: '/step/signin-completion',
      body: { code: totpCode(secret, Math.floor(Date.now() / 1000)), csrfToken: await again.csrfToken() },
    })
    expect(withAlicesCode.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
    expect(await emailOf(again)).toBeNull()
  })

  it("refuse Bob's pending enrolment confirmed in Alice's browser, and Alice's in Bob's", async () => {
    const { store, config, userOf } = deployment()
    const alice = await signedIn(config, 'alice')
    const bob = await signedIn(config, 'bob')
    const bobsSecret = await startEnrolment(bob)
    const alicesSecret = await startEnrolment(alice)
    const bobsPending = bob.jar.get(ENROLMENT_COOKIE)!
    const alicesPending = alice.jar.get(ENROLMENT_COOKIE)!
    alice.jar.cookies.set(ENROLMENT_COOKIE, bobsPending)
    bob.jar.cookies.set(ENROLMENT_COOKIE, alicesPending)
    for (const [client, secret] of [[alice, bobsSecret], [bob, alicesSecret]] as const) {
      const refused = await confirmEnrolment(client, secret)
      expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
      expect(await refused.text()).not.toContain('<li><code>')
    }
    expect(factorsOf(store, (await userOf('alice')).id)).toEqual([])
    expect(factorsOf(store, (await userOf('bob')).id)).toEqual([])
    // Each is still signed in as themselves.
    expect(await emailOf(alice)).toBe(PEOPLE.alice.email)
    expect(await emailOf(bob)).toBe(PEOPLE.bob.email)
  })
})

describe("two users' passkey registration", () => {
  it("adds Alice's passkey to Alice, even when her options request names Bob's address", async () => {
    const { store, config, userOf } = deployment()
    await signedIn(config, 'bob')
    const browser = new PasskeyBrowser(config)
    await signIn(browser.client, 'alice')
    const { response, body } = await browser.options({ action: 'register', email: PEOPLE.bob.email })
    expect(response.status).toBe(200)
    expect(body.action).toBe('register')
    const options = body.options as PublicKeyCredentialCreationOptionsJSON
    expect(options.user.name).toBe(PEOPLE.alice.email)
    const answered = await browser.answer('register', browser.authenticator.register(options))
    expect(answered.headers.get('location')).toBe(ORIGIN)
    const aliceId = (await userOf('alice')).id
    expect([...store.authenticators.values()].map((a) => a.userId)).toEqual([aliceId])
    expect(await browser.session()).toMatchObject({ user: { email: PEOPLE.alice.email } })

    // The passkey opens Alice's account, not Bob's.
    const elsewhere = new PasskeyBrowser(config, browser.authenticator)
    await elsewhere.signIn()
    expect(await elsewhere.session()).toMatchObject({ user: { email: PEOPLE.alice.email } })
  })

  it("refuses Alice's registration answered in Bob's browser, and one answered after Bob signed in where she asked", async () => {
    const { store, config } = deployment()
    const alice = new PasskeyBrowser(config)
    await signIn(alice.client, 'alice')
    const { body } = await alice.options({ action: 'register' })
    const options = body.options as PublicKeyCredentialCreationOptionsJSON

    // Her challenge cookie carried to Bob's signed-in browser.
    const bob = new PasskeyBrowser(config, alice.authenticator)
    await signIn(bob.client, 'bob')
    bob.jar.cookies.set('__Secure-authjs.challenge', alice.jar.get('__Secure-authjs.challenge')!)
    const carried = await bob.answer('register', alice.authenticator.register(options))
    expect(carried.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(store.authenticators.size).toBe(0)
    expect(await bob.session()).toMatchObject({ user: { email: PEOPLE.bob.email } })

    // Asked as Alice, answered after Bob signed in in the same browser.
    const shared = new PasskeyBrowser(config)
    await signIn(shared.client, 'alice')
    const asked = await shared.options({ action: 'register' })
    await shared.signOut()
    await signIn(shared.client, 'bob')
    const late = await shared.answer('register', shared.authenticator.register(asked.body.options as PublicKeyCredentialCreationOptionsJSON))
    expect(late.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(store.authenticators.size).toBe(0)
  })
})

describe("two users' account linking", () => {
  const linkedTo = async (store: MemoryStore) =>
    (await MemoryAdapter(store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub }))?.email ?? null

  it("links the account Alice signs in with to Alice, never to Bob whose address it carries", async () => {
    const { store, config } = deployment()
    await signedIn(config, 'bob')
    const alice = await signedIn(config, 'alice')
    const { callback } = await signInThroughProvider(alice, 'op')
    expect(callback.status).toBe(302)
    expect(await linkedTo(store)).toBe(PEOPLE.alice.email)
    expect(await emailOf(alice)).toBe(PEOPLE.alice.email)
  })

  it("refuses Alice an account linked to Bob: she stays Alice, and Bob's link stays his", async () => {
    const { store, config } = deployment()
    const bob = await signedIn(config, 'bob')
    await signInThroughProvider(bob, 'op')
    expect(await linkedTo(store)).toBe(PEOPLE.bob.email)
    const alice = await signedIn(config, 'alice')
    const before = alice.jar.get(SESSION_COOKIE)
    const { callback } = await signInThroughProvider(alice, 'op')
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=OAuthAccountNotLinked`)
    expect(alice.jar.get(SESSION_COOKIE)).toBe(before)
    expect(await emailOf(alice)).toBe(PEOPLE.alice.email)
    expect(await linkedTo(store)).toBe(PEOPLE.bob.email)
    expect([...store.accounts.values()].filter((a) => a.provider === 'op')).toHaveLength(1)
  })
})
