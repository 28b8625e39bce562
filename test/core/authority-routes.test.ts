/**
 * The routing table and the one authority for "who is signed in" (`core/session/current.ts`).
 * Every route is one of three kinds, and this file proves it from the table itself:
 * - `actsForUser`: run with each dead session (test/fixtures/dead-sessions.ts), it answers and
 *   changes exactly what it does for someone signed out; run with the same session live, it does
 *   not (so the check can fail);
 * - `endsSession` (sign-out only): ends whatever the cookie names;
 * - every other route: run with a live session, it never reads it (no decode, no row lookup).
 * A route added to the table falls in none until it is given a driver or an exercise here; one
 * that reads the session without the flag fails the read count, and one that is flagged but reads
 * the session some other way than through the authority fails with the dead sessions. Last, no
 * module outside the authority and the session route touches the session cookie's value.
 */
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { routesOf, type Route } from '../../core/http/routes.js'
import { decode } from '../../core/jwt.js'
import { totpCode } from '../../core/second-factor/totp.js'
import type { AuthConfig } from '../../core/types.js'
import Email from '../../providers/email.js'
import Passkey from '../../providers/passkey.js'
import Password from '../../providers/password.js'
import { testHasher } from '../password-flow/fixtures.js'
import {
  DEAD_SESSION_KINDS,
  SESSION_COOKIE,
  storedRow,
  VICTIM,
  VICTIM_PROVIDER_SESSION,
  victimApp,
  type SessionKind,
} from '../fixtures/dead-sessions.js'
import { authRequest, Client, ORIGIN, type CookieJar, featureConfig } from '../fixtures/http.js'
import { Auth } from '../../core/index.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CALLBACK_BASE, CLIENT_SECRET, deliverCallback, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { logoutToken } from '../oauth/logout-tokens.js'
import { PasskeyBrowser } from '../webauthn/helpers.js'
import { everyFlow } from '../../core/flows/catalogue.js'
import { apiKeys, createApiKey } from '../../core/api-keys.js'
import { DEVICE_CODE_GRANT, deviceAuthorization } from '../../core/device-authorization.js'

const devices = deviceAuthorization({ clients: [{ clientId: 'cli', name: 'The CLI' }] })

/** Every route authchart ships: the built-in flows', the optional features', the API keys' and the device page's. */
const routes = routesOf(everyFlow, [...apiKeys().routes, ...devices.routes])

const BOB = { id: 'u-bob', email: 'bob@example.com', name: 'Bob', emailVerified: null }
const now = () => Math.floor(Date.now() / 1000)

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
})
afterAll(() => op?.close())

/** A route's name in the table: `METHOD action (provider type)`. */
const nameOf = (route: Route) => `${route.method} ${route.action}${route.provider === 'none' ? '' : ` (${route.provider})`}`

/** The app: a provider of every type the table routes, the victim, and Bob (who signs in by e-mail). */
function appFor(kind: SessionKind, overrides: Partial<AuthConfig> = {}) {
  const outbox: string[] = []
  const sendVerificationRequest = async ({ url }: { url: string }) => void outbox.push(url)
  const app = victimApp(kind, {
    experimental: { enableWebAuthn: true },
    providers: [
      ...featureConfig().providers,
      Passkey(),
      appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'] }),
      {
        id: 'plain',
        name: 'Plain OAuth 2',
        type: 'oauth',
        authorization: `${op.issuer}/auth`,
        token: `${op.issuer}/token`,
        userinfo: `${op.issuer}/me`,
        clientId: 'plain',
        clientSecret: CLIENT_SECRET,
      },
      Email({ sendVerificationRequest }),
      Email({ id: 'direct', link: 'direct', sendVerificationRequest }),
      Password({ hasher: testHasher(), send: () => {} }),
    ] as never,
    apiKeys: apiKeys(),
    deviceAuthorization: devices,
    ...overrides,
  })
  app.store.users.set(BOB.id, { ...BOB })
  return { ...app, outbox }
}

type State = 'none' | 'live' | 'dead'

/** One run of a route: the app, the victim's live session, and the session the request holds. */
interface Scene {
  kind: SessionKind
  store: MemoryStore
  config: AuthConfig
  outbox: string[]
  /** The victim's live session cookie, for the requests before the one under test. */
  live: string
  /** Puts the state's session cookie in `jar` for the request under test (a dead one is ended first). */
  hold(jar: CookieJar): Promise<void>
}

async function sceneOf(kind: SessionKind, state: State): Promise<Scene> {
  const app = appFor(kind)
  const live = await kind.live(app.store)
  return {
    kind,
    ...app,
    live,
    hold: async (jar) => {
      if (state === 'none') jar.cookies.delete(SESSION_COOKIE)
      else jar.cookies.set(SESSION_COOKIE, state === 'live' ? live : await kind.kill(app.store, app.config, live))
    },
  }
}

/** How a flagged route is run, and what it did (for whom), as comparable data. */
interface Driver {
  /** The strategies under which the route acts for the user (both by default). */
  strategies?: readonly ('jwt' | 'database')[]
  run(scene: Scene): Promise<unknown>
}

const userOfBody = async (response: Response) => ((await response.json()) as { user?: { email?: string } } | null)?.user?.email ?? null
const victimRows = (store: MemoryStore) => [...store.sessions.values()].filter((s) => s.userId === VICTIM.id).length

const post = async (client: Client, path: string, body: Record<string, string> = {}) =>
  client.send({ path, body: { ...body, csrfToken: await client.csrfToken() } })

/** Starts the victim's TOTP enrolment (signed in); gives the key its page shows. */
async function startEnrolment(client: Client): Promise<string> {
  await post(client, '/two-factor')
  const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
  return /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
}

const DRIVERS: Readonly<Record<string, Driver>> = {
  'GET session': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      return userOfBody(await client.send({ path: '/session' }))
    },
  },
  'POST session': {
    async run(scene) {
      const client = new Client(scene.config)
      const csrfToken = await client.csrfToken()
      await scene.hold(client.jar)
      return userOfBody(await client.send({ path: '/session', body: { csrfToken } }))
    },
  },
  'GET webauthn-options (webauthn)': {
    async run(scene) {
      const browser = new PasskeyBrowser(scene.config)
      await scene.hold(browser.jar)
      const { response, body } = await browser.options({ action: 'register' })
      return { status: response.status, for: (body.options as PublicKeyCredentialCreationOptionsJSON | undefined)?.user?.name ?? null }
    },
  },
  'POST callback (webauthn)': {
    async run(scene) {
      const browser = new PasskeyBrowser(scene.config)
      browser.jar.cookies.set(SESSION_COOKIE, scene.live)
      const { body } = await browser.options({ action: 'register' })
      await scene.hold(browser.jar)
      const answer = browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON)
      const response = await browser.answer('register', answer)
      return { location: response.headers.get('location'), passkeys: scene.store.authenticators.size }
    },
  },
  // The four OAuth callback routes (GET, and POST for form_post, of both provider types) serve the
  // same binding; the table test below holds them to it.
  'GET callback (oidc)': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      await signInThroughProvider(client, 'op')
      const linked = await MemoryAdapter(scene.store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub })
      return linked?.id === VICTIM.id ? 'linked to the victim' : 'not linked to the victim'
    },
  },
  // Started while signed in, the sign-in links the provider's account to the user (after the
  // freshness gate): both provider types serve the same binding.
  'POST signin (oidc)': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      const start = await post(client, '/signin/op')
      const location = start.headers.get('location') ?? ''
      if (!location.startsWith(op.issuer)) return { start: start.status, location }
      const answer = await visitProvider(location, CALLBACK_BASE)
      await deliverCallback(client, answer)
      const linked = await MemoryAdapter(scene.store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub })
      return linked?.id === VICTIM.id ? 'linked to the victim' : 'not linked to the victim'
    },
  },
  // Signing in as Bob ends the signed-in user's database session; a dead one is no one's.
  'POST callback (email)': {
    strategies: ['database'],
    async run(scene) {
      const client = new Client(scene.config)
      client.jar.cookies.set(SESSION_COOKIE, scene.live)
      await post(client, '/signin/email', { email: BOB.email })
      const csrfToken = await client.csrfToken()
      await scene.hold(client.jar)
      const token = new URL(scene.outbox.at(-1)!).searchParams.get('token')!
      const response = await client.send({ path: '/callback/email', body: { token, email: BOB.email, csrfToken } })
      return { location: response.headers.get('location'), victimRows: victimRows(scene.store) }
    },
  },
  'GET callback (email)': {
    strategies: ['database'],
    async run(scene) {
      const client = new Client(scene.config)
      client.jar.cookies.set(SESSION_COOKIE, scene.live)
      await post(client, '/signin/direct', { email: BOB.email })
      await scene.hold(client.jar)
      const link = new URL(scene.outbox.at(-1)!)
      const response = await client.send({ path: '/callback/direct', query: Object.fromEntries(link.searchParams) })
      return { location: response.headers.get('location'), victimRows: victimRows(scene.store) }
    },
  },
  // The built-in page's options request: the same decision as the GET.
  'POST webauthn-options (webauthn)': {
    async run(scene) {
      const browser = new PasskeyBrowser(scene.config)
      const csrfToken = await browser.client.csrfToken()
      await scene.hold(browser.jar)
      const response = await browser.client.send({ path: '/webauthn-options/passkey', body: { action: 'register', csrfToken } })
      const body = (await response.json()) as { options?: PublicKeyCredentialCreationOptionsJSON }
      return { status: response.status, for: body.options?.user?.name ?? null }
    },
  },
  // A second factor's enrolment, started while signed in: its page shows the key only to the
  // enrolling user's live session, and only that session's answer stores the factor.
  'GET step': {
    async run(scene) {
      const client = new Client(scene.config)
      client.jar.cookies.set(SESSION_COOKIE, scene.live)
      const secret = await startEnrolment(client)
      await scene.hold(client.jar)
      return (await (await client.send({ path: '/step/totp-enrolment' })).text()).includes(secret)
    },
  },
  'POST step': {
    async run(scene) {
      const client = new Client(scene.config)
      client.jar.cookies.set(SESSION_COOKIE, scene.live)
      const secret = await startEnrolment(client)
      const csrfToken = await client.csrfToken()
      await scene.hold(client.jar)
      await client.send({ path: '/step/totp-enrolment', body: { code: totpCode(secret, now()), csrfToken } })
      return (await MemoryAdapter(scene.store).listSecondFactors(VICTIM.id)).map((factor) => factor.type)
    },
  },
  'GET two-factor': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      const response = await client.send({ path: '/two-factor' })
      return { status: response.status, location: response.headers.get('location') }
    },
  },
  'POST two-factor': {
    async run(scene) {
      const client = new Client(scene.config)
      const csrfToken = await client.csrfToken()
      await scene.hold(client.jar)
      const response = await client.send({ path: '/two-factor', body: { csrfToken } })
      return { location: response.headers.get('location') }
    },
  },
  // The provider's page frames this for the provider session the victim signed in through: only a
  // live session of this browser signed in through it ends.
  'GET frontchannel-logout (oidc)': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      const response = await client.send({ path: '/frontchannel-logout/op', query: { iss: op.issuer, sid: VICTIM_PROVIDER_SESSION.sid } })
      const cleared = response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`))
      return { status: response.status, ended: (await response.text()).includes('You are signed out.'), cleared, victimRows: victimRows(scene.store) }
    },
  },
  // The sign-in page says who is signed in already; the sign-out page asks only them.
  'GET signin': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      const response = await client.send({ path: '/signin' })
      return { status: response.status, signedInAs: /You are signed in as <strong[^>]*>([^<]*(?:<wbr>[^<]*)*)/.exec(await response.text())?.[1] ?? null }
    },
  },
  'GET signout': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      const response = await client.send({ path: '/signout' })
      return { status: response.status, asks: (await response.text()).includes('Are you sure you want to sign out?') }
    },
  },
  'GET sessions': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      return (await client.send({ path: '/sessions' })).status
    },
  },
  'GET audit': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      // Signed out: 401; signed in: 400, as this app keeps no audit store (the reason is logged).
      return (await client.send({ path: '/audit' })).status
    },
  },
  // An application's step-up: a live session is asked for a proof; nobody signed in is refused.
  'GET reauthenticate': {
    async run(scene) {
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      const response = await client.send({ path: '/reauthenticate', query: { callbackUrl: '/settings' } })
      return { status: response.status, location: response.headers.get('location') }
    },
  },
  // A password set for the signed-in user: a dead session must set none, as no session does.
  'POST signin (password)': {
    async run(scene) {
      const client = new Client(scene.config)
      const csrfToken = await client.csrfToken()
      await scene.hold(client.jar)
      const response = await client.send({ path: '/signin/password', body: { csrfToken, intent: 'set', password: 'set for the victim' } })
      return { status: response.status, location: response.headers.get('location'), passwords: scene.store.passwords.size }
    },
  },
  'POST sessions': {
    async run(scene) {
      const client = new Client(scene.config)
      const csrfToken = await client.csrfToken()
      // The owner's session on another device, which revoking the others would end.
      const other = scene.kind.strategy === 'database' ? await storedRow(scene.store, now() - 60) : null
      await scene.hold(client.jar)
      const revoke = scene.kind.strategy === 'database' ? 'others' : 'all'
      const response = await client.send({ path: '/sessions', body: { csrfToken, revoke } })
      return { status: response.status, otherKept: other === null || scene.store.sessions.has(other) }
    },
  },
  'GET api-keys': {
    async run(scene) {
      await createApiKey(scene.config, VICTIM.id, { name: 'victim-ci', scopes: [] })
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      const response = await client.send({ path: '/api-keys' })
      const body = (await response.json()) as { apiKeys?: { name: string }[] } | null
      return { status: response.status, names: body?.apiKeys?.map((key) => key.name) ?? null }
    },
  },
  'POST api-keys': {
    async run(scene) {
      const { apiKey } = await createApiKey(scene.config, VICTIM.id, { name: 'victim-ci', scopes: [] })
      const client = new Client(scene.config)
      const csrfToken = await client.csrfToken()
      await scene.hold(client.jar)
      const response = await client.send({ path: '/api-keys', json: { action: 'revoke', id: apiKey.id, csrfToken }, headers: { accept: 'application/json' } })
      const body = (await response.json()) as { error?: string } | null
      const stored = await MemoryAdapter(scene.store).getApiKey(apiKey.id)
      return { status: response.status, error: body?.error ?? null, revoked: stored?.revokedAt !== null }
    },
  },
  'GET device': {
    async run(scene) {
      const { user_code } = await deviceCodes(scene)
      const client = new Client(scene.config)
      await scene.hold(client.jar)
      const response = await client.send({ path: '/device', query: { user_code } })
      const html = await response.text()
      return { status: response.status, confirms: html.includes('Sign in The CLI?') }
    },
  },
  // Denying needs no fresh proof, so a live session of any age is answered.
  'POST device': {
    async run(scene) {
      const { user_code, device_code } = await deviceCodes(scene)
      const client = new Client(scene.config)
      const csrfToken = await client.csrfToken()
      await scene.hold(client.jar)
      const response = await client.send({ path: '/device', body: { action: 'deny', user_code, csrfToken } })
      const polled = await Auth(
        authRequest({ path: '/auth/oauth/token', body: { grant_type: DEVICE_CODE_GRANT, device_code, client_id: 'cli' } }),
        scene.config as Omit<AuthConfig, 'raw'>,
      )
      return { status: response.status, device: ((await polled.json()) as { error?: string }).error ?? null }
    },
  },
}

/** A device's codes, asked for under the scene's configuration. */
async function deviceCodes(scene: Scene): Promise<{ user_code: string; device_code: string }> {
  const response = await Auth(authRequest({ path: '/auth/device_authorization', body: { client_id: 'cli' } }), scene.config as Omit<AuthConfig, 'raw'>)
  return (await response.json()) as { user_code: string; device_code: string }
}

/** The driver of a flagged route: its own, or that of a route serving the very same binding. */
function driverFor(route: Route): [string, Driver] | undefined {
  const own = DRIVERS[nameOf(route)]
  if (own) return [nameOf(route), own]
  const twin = routes.find((r) => r !== route && r.actsForUser && r.serve === route.serve && DRIVERS[nameOf(r)])
  return twin ? [nameOf(twin), DRIVERS[nameOf(twin)]!] : undefined
}

const flagged = routes.filter((r) => r.actsForUser)

describe('the routing table', () => {
  it('gives every route that acts for the user a driver here, and no driver to a route without the flag', () => {
    expect(flagged.filter((r) => !driverFor(r)).map(nameOf)).toEqual([])
    const flaggedNames = new Set(flagged.map(nameOf))
    expect(Object.keys(DRIVERS).filter((name) => !flaggedNames.has(name))).toEqual([])
  })

  it('has one route that ends sessions whatever they are: sign-out', () => {
    expect(routes.filter((r) => r.endsSession).map(nameOf)).toEqual(['POST signout'])
    expect(routes.filter((r) => r.endsSession && r.actsForUser)).toEqual([])
  })
})

/** Each driver with each kind of dead session it applies to (routes sharing a driver are one run). */
const runs = Object.entries(DRIVERS).flatMap(([driverName, driver]) =>
  DEAD_SESSION_KINDS.filter((kind) => !driver.strategies || driver.strategies.includes(kind.strategy)).map(
    (kind) => [driverName, kind.name, driver, kind] as const,
  ),
)

describe.each(runs)('%s, holding %s', (_driverName, _kindName, driver, kind) => {
  it('acts as for someone signed out, and otherwise with the session live', async () => {
    const signedOut = await driver.run(await sceneOf(kind, 'none'))
    const live = await driver.run(await sceneOf(kind, 'live'))
    const dead = await driver.run(await sceneOf(kind, 'dead'))
    expect(live, 'the route acts for the live session (else this run proves nothing)').not.toEqual(signedOut)
    expect(dead).toEqual(signedOut)
  })
})

/** An app whose session reads are counted: every decode of a JWT, every lookup of a row. */
function countingApp(kind: SessionKind) {
  let reads = 0
  const app = appFor(kind, kind.strategy === 'jwt' ? { jwt: { decode: (params) => (reads++, decode(params)) } } : {})
  if (kind.strategy === 'database') {
    const memory = MemoryAdapter(app.store)
    app.config.adapter = { ...memory, getSessionAndUser: (token) => (reads++, memory.getSessionAndUser(token)) }
  }
  return {
    ...app,
    /**
     * Sends `act` and answers how many times it read the session; `reached` checks the answer, so
     * an exercise that stops early (a 400, a refused flow) cannot pass for one that read nothing.
     */
    async reads(act: () => Promise<Response>, reached: (response: Response) => void | Promise<void>): Promise<number> {
      const before = reads
      const response = await act()
      const count = reads - before
      await reached(response)
      return count
    },
  }
}
type CountingApp = ReturnType<typeof countingApp>

/** A signed-in client (the victim's live session) of a counting app. */
async function signedIn(app: CountingApp, kind: SessionKind): Promise<Client> {
  const client = new Client(app.config)
  client.jar.cookies.set(SESSION_COOKIE, await kind.live(app.store))
  return client
}

/** How each route that does not act for the user is exercised, as a signed-in user would reach it. */
const ok = (response: Response) => expect(response.status).toBe(200)
const redirectsTo = (prefix: () => string) => (response: Response) => {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toMatch(new RegExp(`^${prefix().replace(/[.?]/g, '\\$&')}`))
}
const signInPage = () => `${ORIGIN}/auth/signin`

const EXERCISES: Readonly<Record<string, (app: CountingApp, client: Client) => Promise<number>>> = {
  'GET providers': (app, client) => app.reads(() => client.send({ path: '/providers' }), ok),
  'GET csrf': (app, client) => app.reads(() => client.send({ path: '/csrf' }), ok),
  'POST signin': (app, client) => app.reads(() => post(client, '/signin'), redirectsTo(signInPage)),
  'POST signin (credentials)': (app, client) => app.reads(() => post(client, '/signin/credentials'), redirectsTo(signInPage)),
  'POST signin (webauthn)': (app, client) => app.reads(() => post(client, '/signin/passkey'), redirectsTo(signInPage)),
  'GET callback (password)': (app, client) => app.reads(() => client.send({ path: '/callback/password', query: { intent: 'forgot' } }), ok),
  // A sign-in over the session (refused here: Bob has no password); the session is never read.
  'POST callback (password)': (app, client) =>
    app.reads(() => post(client, '/callback/password', { email: BOB.email, password: 'not his password' }), redirectsTo(signInPage)),
  // A sign-in over the session: it is replaced, never read.
  'POST callback (credentials)': (app, client) =>
    app.reads(() => post(client, '/callback/credentials', { username: 'alice', password: 'wonderland' }), redirectsTo(() => ORIGIN)),
  'POST signin (email)': (app, client) =>
    app.reads(() => post(client, '/signin/email', { email: BOB.email }), redirectsTo(() => `${ORIGIN}/auth/verify-request`)),
  'GET error': (app, client) => app.reads(() => client.send({ path: '/error', query: { error: 'Configuration' } }), (r) => expect(r.status).toBe(500)),
  'GET verify-request': (app, client) => app.reads(() => client.send({ path: '/verify-request', query: { provider: 'email' } }), ok),
  // The provider's server ends sessions by the provider session its Logout Token names, not by a cookie.
  'POST backchannel-logout (oidc)': async (app, client) => {
    const token = await logoutToken(op, 'op', VICTIM_PROVIDER_SESSION.sid)
    return app.reads(() => client.send({ path: '/backchannel-logout/op', body: { logout_token: token } }), ok)
  },
}

const plain = routes.filter((r) => !r.actsForUser && !r.endsSession)
const countedKinds = DEAD_SESSION_KINDS.filter((kind) => kind.name === 'a JWT after sign-out everywhere' || kind.name === 'a database row past its absolute lifetime')

describe('routes that do not act for the user', () => {
  it('each have an exercise here, and only they', () => {
    expect(plain.map(nameOf).filter((name) => !EXERCISES[name])).toEqual([])
    expect(Object.keys(EXERCISES).filter((name) => !plain.some((r) => nameOf(r) === name))).toEqual([])
  })

  it.each(countedKinds.map((kind) => [kind.strategy, kind] as const))('never read a live %s session', async (_strategy, kind) => {
    const app = countingApp(kind)
    // The count sees reads: the session route reads once.
    const client = await signedIn(app, kind)
    expect(await app.reads(() => client.send({ path: '/session' }), ok)).toBe(1)
    const read: Record<string, number> = {}
    for (const route of plain) {
      const exercise = EXERCISES[nameOf(route)]!
      read[nameOf(route)] = await exercise(app, await signedIn(app, kind))
    }
    expect(Object.entries(read).filter(([, count]) => count > 0)).toEqual([])
  })
})

/** Source files of the package (not tests). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) return sources(path)
    return /\.(ts|js|svelte)$/.test(entry) && !entry.endsWith('.d.ts') ? [path] : []
  })
}

describe('the session cookie outside the routing table', () => {
  it('is read only by the authority, the session route and the request context that carries it', () => {
    // What reads a session, and the only modules that may: the cookie's value (not its chunk
    // names, which sign-out and revocation clear), the session codec's decoder, the adapter's
    // session lookup.
    const readers: [RegExp, string[]][] = [
      [/\bsessionCookie\b(?!\.names)(?!:)/, ['core/session/current.ts', 'core/flows/session/flow.ts', 'core/http/dispatch.ts']],
      [/\bdecodeSessionTokenNow\b/, ['core/session/token.ts', 'core/session/current.ts']],
      [
        /\bgetSessionAndUser\b/,
        // The authority; the session route's effect of that name (its chart, logic and compiled table); the adapter interface and its instrumentation.
        [
          'core/session/current.ts',
          'core/flows/session/flow.ts',
          'machines/session.machine.ts',
          'machines/session.logic.ts',
          'core/charts/session.ts',
          'core/shapes.ts',
          'core/session/adapter.ts',
        ],
      ],
    ]
    const files = ['core', 'integrations', 'extensions', 'providers', 'stores', 'machines', 'testing'].flatMap(sources)
    const found = readers.flatMap(([reads, allowed]) =>
      files.filter((file) => !allowed.includes(file) && reads.test(readFileSync(file, 'utf8'))).map((file) => `${file}: ${reads.source}`),
    )
    expect(found).toEqual([])
  })
})
