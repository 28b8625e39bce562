/**
 * Every cookie the engine sets fits in a browser: name, value and attributes at most 4,096 bytes
 * (browsers drop a larger cookie silently, and the user lands on the sign-in page with no
 * message). Each flow is walked through its resting states with the largest realistic context: a
 * 254-character e-mail address, a long name and picture URL, the longest callback URL the engine
 * accepts, an extension with its own context, many providers, a second factor, and an OIDC
 * provider whose tokens go into the JWT (`refreshTokens`, `logout`, and `dpop`'s sealed key pair).
 * The re-authentication is walked with the largest intent it seals: an application's route with
 * the longest callback URL, and a sensitive action's form carrying one, through every resting
 * state (a wrong proof, an e-mailed code sent, a wrong code) before the proof that resumes it.
 * The session cookie may be chunked above 4,096 bytes, as Auth.js chunks it: each chunk must fit.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { nullable, object, string } from 'superstruct'
import { assign } from 'xstate'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { CONTINUE, toStepPage } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { stepForm } from '../../core/pages/steps.js'
import { totpCode } from '../../core/second-factor/totp.js'
import type { AuthConfig } from '../../core/types.js'
import Credentials from '../../providers/credentials.js'
import Email from '../../providers/email.js'
import GitHub from '../../providers/github.js'
import Passkey from '../../providers/passkey.js'
import { Client, CookieJar, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { EmailClient, lastLink, type Outbox } from '../email/helpers.js'
import { PasskeyBrowser } from '../webauthn/helpers.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

/** What a browser keeps: a cookie of more bytes (name, value, attributes) is dropped. */
const BROWSER_COOKIE_LIMIT = 4096

/** The longest address RFC 5321 allows: 254 characters (64-character local part). */
const LONG_EMAIL = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`
const LONG_NAME = 'Maria del Carmen Concepción Inmaculada de la Santísima Trinidad Fernández-Villaverde y Ortega'
const LONG_PICTURE = `https://images.example.com/avatars/${'e'.repeat(160)}.png?size=512&format=webp`

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({
    clients: [await opClient('client_secret_basic', 'op')],
    refreshTokens: true,
    account: { email: LONG_EMAIL, name: LONG_NAME, picture: LONG_PICTURE },
  })
})
afterAll(() => op?.close())

/** Every `Set-Cookie` the engine emitted during a test, as sent. */
const emitted: { flow: string; header: string }[] = []
let currentFlow = ''
const storeCookies = CookieJar.prototype.store
vi.spyOn(CookieJar.prototype, 'store').mockImplementation(function (this: CookieJar, response: Response) {
  for (const header of response.headers.getSetCookie()) emitted.push({ flow: currentFlow, header })
  return storeCookies.call(this, response)
})

/** An application step with its own sealed context, resting at a page (the largest it may hold). */
const profileStep = defineExtension({
  id: 'profile',
  version: '1',
  at: 'afterFirstFactor',
  initial: 'askingProfile',
  context: {
    schema: { displayName: nullable(string()), company: nullable(string()) },
    initial: { displayName: null, company: null },
  },
  states: {
    askingProfile: {
      tags: 'awaitsRequest',
      meta: {
        outcome: toStepPage,
        step: { page: 'profile', events: { 'profile.submit': object({ displayName: string(), company: string() }) } },
      },
      on: { 'profile.submit': { target: CONTINUE, actions: 'rememberProfile' } },
    },
  },
  actions: {
    rememberProfile: assign({
      displayName: ({ event }: { event: { displayName?: string } }) => event.displayName ?? null,
      company: ({ event }: { event: { company?: string } }) => event.company ?? null,
    }),
  },
  pages: {
    profile: (view) => ({ title: 'Profile', html: stepForm(view, '<input name="displayName"><input name="company">', 'Save') }),
  },
})

/** Twenty more providers on the sign-in page, as a large deployment lists them. */
const manyProviders = Array.from({ length: 20 }, (_, i) =>
  GitHub({ id: `github-${i}`, clientId: `client-${i}`, clientSecret: `secret-${i}` }),
)

interface World {
  store: MemoryStore
  outbox: Outbox
  config: AuthConfig
  passkey?: PasskeyBrowser
}

function world(strategy: 'jwt' | 'database', extensions: boolean): World {
  const store = createMemoryStore()
  const outbox: Outbox = []
  const config = {
    secret: SECRET,
    secondFactor: totp(),
    stepUp: stepUp(),
    trustHost: true,
    logger: spyLogger(),
    adapter: MemoryAdapter(store),
    session: { strategy },
    experimental: { enableWebAuthn: true },
    extensions: extensions ? [profileStep] : [],
    providers: [
      Credentials({
        credentials: { username: {}, password: { type: 'password' } },
        authorize: (c) =>
          c.password === 'wonderland' ? { id: 'u-long', email: LONG_EMAIL, name: LONG_NAME, image: LONG_PICTURE } : null,
      }),
      appProvider(op.issuer, 'client_secret_basic', 'op', { refreshTokens: true, logout: true, dpop: true, checks: ['pkce', 'state', 'nonce'] }),
      Email({ code: true, sendVerificationRequest: async (params) => void outbox.push(params) }),
      Passkey(),
      ...manyProviders,
    ],
  } as AuthConfig
  return { store, outbox, config }
}

/** The longest callback URL the engine accepts: 2,048 characters, many of them percent-encoded in its cookie. */
const LONG_CALLBACK = (() => {
  const base = `${ORIGIN}/dashboard/reports?`
  let query = ''
  for (let i = 0; base.length + query.length < 2048; i++) query += `${i ? '&' : ''}f${i}=a%20b/c`
  return `${base}${query}`.slice(0, 2048)
})()

const now = () => Math.floor(Date.now() / 1000)
const STEP = '/step/signin-completion'
const SESSION_COOKIE = '__Secure-authjs.session-token'

/**
 * Answers every step the sign-in stops at, as a user would: the application's profile page (with
 * the longest values it takes), then the second factor (one wrong code first, so the flow rests
 * twice there). Returns the last answer.
 */
async function completeSteps(client: Client, response: Response, secret?: string): Promise<Response> {
  let answer = response
  let wrongSent = false
  for (let hop = 0; hop < 6 && answer.headers.get('location') === `${ORIGIN}/auth${STEP}`; hop++) {
    const page = await (await client.send({ path: STEP })).text()
    const csrfToken = await client.csrfToken()
    if (page.includes('name="displayName"')) {
      answer = await client.send({ path: STEP, body: { csrfToken, event: 'profile.submit', displayName: 'd'.repeat(300), company: 'c'.repeat(300) } })
    } else {
      expect(page).toContain('Two-step verification')
      const code = wrongSent ? totpCode(secret!, now() + 30) : '000000'
      wrongSent = true
      answer = await client.send({ path: STEP, body: { csrfToken, code } })
    }
  }
  return answer
}

/** Turns on the second factor for a signed-in client (QR page, one wrong code, the right one). */
async function enrol(client: Client): Promise<string> {
  const start = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken(), callbackUrl: LONG_CALLBACK } })
  expect(start.headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)
  const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
  const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
  await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: '000000' } })
  const done = await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } })
  expect(done.status).toBe(200)
  return secret
}

/** Signed in: the session route answers with the user (and reissues the session cookie). */
async function expectSignedIn(client: Client): Promise<void> {
  const { body } = await client.session()
  expect(body).toMatchObject({ user: { email: LONG_EMAIL } })
}

/** A first factor: signs a client in (the first time, or again) and returns where it was sent. */
type FirstFactor = (w: World, client: Client) => Promise<Response>

const FIRST_FACTORS: [string, FirstFactor][] = [
  ['credentials', (_w, client) => client.signIn({ username: LONG_EMAIL, password: 'wonderland' }, { callbackUrl: LONG_CALLBACK })],
  ['oidc', async (_w, client) => (await signInThroughProvider(client, 'op', { callbackUrl: LONG_CALLBACK })).callback],
  [
    'email',
    async (w, client) => {
      const email = new EmailClient(w.config)
      email.jar.cookies.clear()
      for (const [k, v] of client.jar.cookies) email.jar.cookies.set(k, v)
      await email.requestLink(LONG_EMAIL, { callbackUrl: LONG_CALLBACK })
      // Alternate the link and the one-time code.
      const answer = w.outbox.length % 2 ? await email.confirm(lastLink(w.outbox)) : await email.enterCode(w.outbox.at(-1)!.code!)
      client.jar.cookies.clear()
      for (const [k, v] of email.jar.cookies) client.jar.cookies.set(k, v)
      return answer
    },
  ],
  [
    'passkey',
    async (w, client) => {
      w.passkey ??= new PasskeyBrowser(w.config)
      const browser = w.passkey
      for (const [k, v] of client.jar.cookies) browser.jar.cookies.set(k, v)
      // The sign-in page remembers the callback URL (its cookie) for the ceremony.
      await browser.client.send({ path: '/signin', query: { callbackUrl: LONG_CALLBACK } })
      // With an e-mail provider, a sign-up proves its address with the code it was sent.
      const answer = browser.authenticator.passkeys.length
        ? await browser.signIn()
        : await browser.signUpWithCode(LONG_EMAIL, () => w.outbox.at(-1)!.code!)
      client.jar.cookies.clear()
      for (const [k, v] of browser.jar.cookies) client.jar.cookies.set(k, v)
      return answer
    },
  ],
]

describe.each([
  ['JWT sessions', 'jwt' as const],
  ['database sessions', 'database' as const],
])('every cookie fits in a browser (%s)', (_name, strategy) => {
  it.each(FIRST_FACTORS)(
    '%s: sign-in through an application step, enrolment, sign-in with the second factor, session, sign-out',
    async (name, firstFactor) => {
      currentFlow = `${name}/${strategy}`
      const w = world(strategy, true)
      const client = new Client(w.config)
      const first = await completeSteps(client, await firstFactor(w, client))
      expect(first.headers.get('location')).toBe(LONG_CALLBACK)
      await expectSignedIn(client)
      const secret = await enrol(client)
      await client.signOut()
      const again = await firstFactor(w, client)
      expect(again.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
      const done = await completeSteps(client, again, secret)
      expect(done.headers.get('location')).toBe(LONG_CALLBACK)
      await expectSignedIn(client)
      await client.signOut({ callbackUrl: `${ORIGIN}/` })
      expect((await client.session()).body).toBeNull()

      const mine = emitted.filter((e) => e.flow === currentFlow)
      const over = mine.filter((e) => e.header.length > BROWSER_COOKIE_LIMIT)
      expect(over.map((e) => `${e.header.slice(0, 60)}… ${e.header.length} bytes`)).toEqual([])
    },
  )
})

/** Lets the signed-in client's proof grow older than the default step-up policy (ten minutes). */
function ageProofs(): void {
  vi.setSystemTime(Date.now() + 11 * 60_000)
}

async function reauthStep(client: Client, fields: Record<string, string>): Promise<Response> {
  return client.send({ path: '/step/reauthenticate', body: { ...fields, csrfToken: await client.csrfToken() }, headers: { accept: 'text/html' } })
}

/**
 * At the re-authentication page: a wrong password, an e-mailed code sent and a wrong one typed
 * (each rests the flow again, sealed), then `prove` succeeds; returns its answer.
 */
async function restEverywhereThenProve(w: World, client: Client, prove: () => Promise<Response>): Promise<Response> {
  const wrong = await reauthStep(client, { event: 'reauth.password', username: LONG_EMAIL, password: 'guess' })
  expect(wrong.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
  const sent = w.outbox.length
  await reauthStep(client, { event: 'reauth.sendEmailCode' })
  expect(w.outbox).toHaveLength(sent + 1)
  await reauthStep(client, { event: 'reauth.emailCode', code: '00000000' })
  return prove()
}

describe.each([
  ['JWT sessions', 'jwt' as const],
  ['database sessions', 'database' as const],
])('every cookie of a re-authentication fits in a browser (%s)', (_name, strategy) => {
  it('an application route with the longest callback URL, and a sensitive action whose form carries one', async () => {
    currentFlow = `reauthenticate/${strategy}`
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const w = world(strategy, false)
      // The code goes to the address the adapter stores: a JWT credentials user is stored
      // beforehand (a database session's sign-in stores it itself).
      if (strategy === 'jwt') w.store.users.set('u-long', { id: 'u-long', email: LONG_EMAIL, name: LONG_NAME, image: LONG_PICTURE, emailVerified: null })
      const client = new Client(w.config)
      await client.signIn({ username: LONG_EMAIL, password: 'wonderland' }, { callbackUrl: LONG_CALLBACK })
      await expectSignedIn(client)

      // An application's own route (requireRecentAuth) sends the stale session here with its path.
      ageProofs()
      const back = LONG_CALLBACK.slice(ORIGIN.length)
      const asked = await client.send({ path: '/reauthenticate', query: { callbackUrl: back }, headers: { accept: 'text/html' } })
      expect(asked.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
      const resumed = await restEverywhereThenProve(w, client, () =>
        reauthStep(client, { event: 'reauth.emailCode', code: w.outbox.at(-1)!.code! }),
      )
      expect(resumed.headers.get('location')).toBe(back)

      // A built-in action's form, sealed while the proof is stale, resumed after the password.
      ageProofs()
      const refused = await client.send({
        path: '/two-factor',
        body: { csrfToken: await client.csrfToken(), callbackUrl: LONG_CALLBACK },
        headers: { accept: 'text/html' },
      })
      expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
      const resume = await restEverywhereThenProve(w, client, () =>
        reauthStep(client, { event: 'reauth.password', username: LONG_EMAIL, password: 'wonderland' }),
      )
      expect(resume.status).toBe(200)
      expect(await resume.text()).toContain('action="/auth/two-factor"')
    } finally {
      vi.useRealTimers()
    }

    const mine = emitted.filter((e) => e.flow === currentFlow)
    expect(mine.some((e) => e.header.startsWith('__Secure-authchart.flow.reauthenticate='))).toBe(true)
    const over = mine.filter((e) => e.header.length > BROWSER_COOKIE_LIMIT)
    expect(over.map((e) => `${e.header.slice(0, 60)}… ${e.header.length} bytes`)).toEqual([])
  })
})

describe('what cannot fit is refused or split, never sent whole', () => {
  it.each([
    ['longer than 2,048 characters', `${ORIGIN}/${'a'.repeat(2048)}`],
    ['whose cookie would pass 4,096 bytes once percent-encoded', `${ORIGIN}/${'/'.repeat(1500)}`],
  ])('refuses a callback URL %s cleanly: 400, logged, no cookie', async (_name, callbackUrl) => {
    currentFlow = 'long-callback'
    const { config } = world('jwt', false)
    const client = new Client(config)
    const response = await client.signIn({ username: LONG_EMAIL, password: 'wonderland' }, { callbackUrl })
    expect(response.status).toBe(400)
    expect(client.jar.get('__Secure-authjs.callback-url')).toBeUndefined()
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect((config.logger as ReturnType<typeof spyLogger>).error).toHaveBeenCalledWith(
      expect.objectContaining({ name: 'InvalidCallbackUrl', message: expect.stringMatching(/^Invalid callback URL: \d+ characters, at most 2048/) }),
    )
  })

  it('ignores a callback-url cookie that could not have come from us (too long for a browser)', async () => {
    currentFlow = 'long-callback-cookie'
    const { config } = world('jwt', false)
    const client = new Client(config)
    client.jar.cookies.set('__Secure-authjs.callback-url', `${ORIGIN}/${'a'.repeat(3000)}`)
    const response = await client.signIn({ username: LONG_EMAIL, password: 'wonderland' })
    expect(response.headers.get('location')).toBe(ORIGIN)
  })

  it('splits a session too large for one cookie into chunks that each fit, as Auth.js does', async () => {
    currentFlow = 'chunked-session'
    const { config } = world('jwt', false)
    const client = new Client({
      ...config,
      // An application keeping a large claim in its JWT (group lists, permissions).
      callbacks: { jwt: ({ token }) => ({ ...token, groups: Array.from({ length: 400 }, (_, i) => `group-${i}-${'g'.repeat(20)}`) }) },
    })
    await client.signIn({ username: LONG_EMAIL, password: 'wonderland' }, { callbackUrl: LONG_CALLBACK })
    const chunks = emitted.filter((e) => e.flow === currentFlow && e.header.startsWith(`${SESSION_COOKIE}.`))
    expect(chunks.length).toBeGreaterThan(2)
    for (const chunk of chunks) expect(chunk.header.length).toBeLessThanOrEqual(BROWSER_COOKIE_LIMIT)
    await expectSignedIn(client)
  })
})

describe('the walks above', () => {
  it('met every cookie the engine sets for these flows, and the largest flow contexts', () => {
    const names = new Set(emitted.map((e) => e.header.slice(0, e.header.indexOf('='))))
    for (const name of [
      '__Host-authjs.csrf-token',
      '__Secure-authjs.callback-url',
      '__Secure-authjs.session-token',
      '__Secure-authjs.state',
      '__Secure-authjs.challenge',
      '__Secure-authchart.flow.signin-completion',
      '__Secure-authchart.flow.email-signin',
      '__Secure-authchart.flow.totp-enrolment',
      '__Secure-authchart.flow.reauthenticate',
    ]) {
      expect(names, name).toContain(name)
    }
    const over = emitted.filter((e) => e.header.length > BROWSER_COOKIE_LIMIT)
    expect(over).toEqual([])
  })
})
