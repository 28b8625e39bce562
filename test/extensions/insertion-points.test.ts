/**
 * Each insertion point of the sign-in completion at run time, through `Auth`, on every way in
 * (credentials with JWT and with database sessions, OIDC at the local provider, an e-mail link, a
 * passkey): a first sign-in and a sign-in of the user the store now holds both stop at the
 * application's step with no session anywhere, the step's answer goes on to the session, a step
 * at `afterFirstSignIn` is not asked again once completed, and a step at `afterFirstFactor`
 * comes before the second factor while the others come after it.
 */
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server'
import { object } from 'superstruct'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONTINUE, stepForm, toStepPage, type AuthConfig, type ExtensionPoint, type FlowExtension } from 'authchart'
import { defineExtension } from 'authchart/extensions'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { SendVerificationRequestParams } from '../../core/email/provider.js'
import { sealFactorSecret } from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import Credentials from '../../providers/credentials.js'
import Email from '../../providers/email.js'
import Passkey from '../../providers/passkey.js'
import { EmailClient } from '../email/helpers.js'
import { Client, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { termsExtension } from 'authchart/extensions/terms'
import { PasskeyBrowser } from '../webauthn/helpers.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const STEP_PAGE = `${ORIGIN}/auth/step/signin-completion`
const POINTS: readonly ExtensionPoint[] = ['afterFirstFactor', 'afterFirstSignIn', 'beforeSession']

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
})
afterAll(() => op?.close())

/** An application's page at `at`: one button that goes on. */
function stepAt(at: ExtensionPoint): FlowExtension {
  return defineExtension({
    id: 'welcome-back',
    version: '1',
    at,
    initial: 'greeting',
    states: {
      greeting: {
        tags: 'awaitsRequest',
        meta: { outcome: toStepPage, step: { page: 'welcome-back', events: { 'welcome.continue': object() } } },
        on: { 'welcome.continue': CONTINUE },
      },
    },
    pages: {
      'welcome-back': (view) => ({ title: 'Welcome', html: `<h1>A step at ${at}</h1>${stepForm(view, '', 'Continue')}` }),
    },
  })
}

interface Deployment {
  config: AuthConfig
  store: MemoryStore
  outbox: SendVerificationRequestParams[]
  authenticator: SoftwareAuthenticator
}

/** A way in: how its deployment is configured, and one sign-in through it in a fresh browser. */
interface WayIn {
  name: string
  strategy: 'jwt' | 'database'
  providers: (deployment: Omit<Deployment, 'config'>) => unknown[]
  signIn: (deployment: Deployment, first: boolean) => Promise<{ client: Client; response: Response }>
}

const credentials = () =>
  Credentials({
    credentials: { username: {}, password: { type: 'password' } },
    authorize: ({ password }) => (password === 'wonderland' ? { id: 'alice', name: 'Alice', email: 'alice@example.com' } : null),
  })

async function credentialsSignIn({ config }: Deployment) {
  const client = new Client(config)
  return { client, response: await client.signIn({ username: 'alice', password: 'wonderland' }) }
}

const WAYS_IN: WayIn[] = [
  { name: 'credentials, JWT sessions', strategy: 'jwt', providers: () => [credentials()], signIn: credentialsSignIn },
  { name: 'credentials, database sessions', strategy: 'database', providers: () => [credentials()], signIn: credentialsSignIn },
  {
    name: 'OIDC at the local provider',
    strategy: 'jwt',
    providers: () => [appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'] })],
    signIn: async ({ config }) => {
      const client = new Client(config)
      return { client, response: (await signInThroughProvider(client, 'op')).callback }
    },
  },
  {
    name: 'an e-mail link',
    strategy: 'database',
    providers: ({ outbox }) => [Email({ sendVerificationRequest: async (params) => void outbox.push(params) })],
    signIn: async ({ config, outbox }) => {
      const client = new EmailClient(config)
      await client.requestLink('alice@example.com')
      return { client, response: await client.confirm(new URL(outbox.at(-1)!.url)) }
    },
  },
  {
    name: 'a passkey',
    strategy: 'database',
    providers: () => [Passkey()],
    signIn: async ({ config, authenticator }, first) => {
      const browser = new PasskeyBrowser(config, authenticator)
      const { body } = await browser.options(first ? { email: 'alice@example.com' } : { action: 'authenticate' })
      const answer = first
        ? authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON)
        : authenticator.authenticate(body.options as PublicKeyCredentialRequestOptionsJSON)
      return { client: browser.client, response: await browser.answer(body.action, answer) }
    },
  },
]

function deploy(way: WayIn, at: ExtensionPoint): Deployment {
  const store = createMemoryStore()
  const outbox: SendVerificationRequestParams[] = []
  const authenticator = new SoftwareAuthenticator(ORIGIN)
  const config = {
    secret: SECRET,
    secondFactor: totp(),
    stepUp: stepUp(),
    trustHost: true,
    logger: spyLogger(),
    adapter: MemoryAdapter(store),
    session: { strategy: way.strategy },
    experimental: { enableWebAuthn: true },
    providers: way.providers({ store, outbox, authenticator }),
    extensions: [stepAt(at)],
  } as AuthConfig
  return { config, store, outbox, authenticator }
}

const signedInEmail = async (client: Client) =>
  ((await client.session()).body as { user?: { email?: string } } | null)?.user?.email ?? null

/** The sign-in rests at the step: its page shows, and there is no session anywhere. */
async function expectAtTheStep(deployment: Deployment, at: ExtensionPoint, client: Client, response: Response) {
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(STEP_PAGE)
  expect(response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
  expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  expect(deployment.store.sessions.size).toBe(0)
  expect(await signedInEmail(client)).toBeNull()
  const page = await (await client.send({ path: '/step/signin-completion' })).text()
  expect(page).toContain(`<h1>A step at ${at}</h1>`)
}

async function goOn(client: Client): Promise<Response> {
  return client.send({ path: '/step/signin-completion', body: { csrfToken: await client.csrfToken(), event: 'welcome.continue' } })
}

describe.each(POINTS)('a step at %s', (at) => {
  it.each(WAYS_IN.map((way) => [way.name, way] as const))(
    'stops a first sign-in and a stored user alike, with no session until it is answered (%s)',
    async (_name, way) => {
      const deployment = deploy(way, at)
      const first = await way.signIn(deployment, true)
      await expectAtTheStep(deployment, at, first.client, first.response)
      const answered = await goOn(first.client)
      expect(answered.status).toBe(302)
      expect(answered.headers.get('location')).not.toBe(STEP_PAGE)
      expect(await signedInEmail(first.client)).toBe(way.name.startsWith('OIDC') ? OP_ACCOUNT.email.toLowerCase() : 'alice@example.com')

      // The same person again, now a user the store holds (or whose step is on record).
      expect(deployment.store.users.size).toBe(way.strategy === 'jwt' && way.name.startsWith('credentials') ? 0 : 1)
      deployment.store.sessions.clear()
      const again = await way.signIn(deployment, false)
      if (at === 'afterFirstSignIn') {
        // Completed once: not asked again, whichever way in.
        expect(again.response.headers.get('location')).not.toBe(STEP_PAGE)
        expect(await signedInEmail(again.client)).not.toBeNull()
      } else {
        await expectAtTheStep(deployment, at, again.client, again.response)
      }
    },
  )
})

describe('the steps and the second factor', () => {
  it.each(POINTS)('puts a step at %s on its side of the code: afterFirstFactor before it, the others after', async (at) => {
    const deployment = deploy(WAYS_IN[1]!, at)
    const secret = createTotpSecret()
    // A stored user with a second factor (the credentials account "alice" linked to it).
    const adapter = MemoryAdapter(deployment.store)
    const user = await adapter.createUser({ id: 'u-alice', name: 'Alice', email: 'alice@example.com', emailVerified: null })
    // Stored as the completion stores a credentials account (a type Auth.js's adapter types do not name).
    await adapter.linkAccount({ userId: user.id, type: 'credentials' as never, provider: 'credentials', providerAccountId: 'alice' })
    await adapter.createSecondFactor!({ id: 'factor', userId: user.id, type: 'totp', secret: await sealFactorSecret(secret, [SECRET]), createdAt: new Date() })

    const { client, response } = await credentialsSignIn(deployment)
    expect(response.headers.get('location')).toBe(STEP_PAGE)
    const page = async () => (await client.send({ path: '/step/signin-completion' })).text()
    const code = async () =>
      client.send({
        path: '/step/signin-completion',
        body: { csrfToken: await client.csrfToken(), code: totpCode(secret, Math.floor(Date.now() / 1000)) },
      })
    if (at === 'afterFirstFactor') {
      expect(await page()).toContain(`<h1>A step at ${at}</h1>`)
      expect((await goOn(client)).headers.get('location')).toBe(STEP_PAGE)
      expect(await page()).toContain('Two-step verification')
      expect(await signedInEmail(client)).toBeNull()
      expect((await code()).headers.get('location')).toBe(ORIGIN)
    } else {
      expect(await page()).toContain('Two-step verification')
      expect((await code()).headers.get('location')).toBe(STEP_PAGE)
      expect(await page()).toContain(`<h1>A step at ${at}</h1>`)
      expect(await signedInEmail(client)).toBeNull()
      expect((await goOn(client)).headers.get('location')).toBe(ORIGIN)
    }
    expect(await signedInEmail(client)).toBe('alice@example.com')
  })
})

describe('the terms step', () => {
  it('is reached by an OIDC sign-in too', async () => {
    const accepted = new Map<string, string>()
    const config = {
      secret: SECRET,
      secondFactor: totp(),
      stepUp: stepUp(),
      trustHost: true,
      logger: spyLogger(),
      adapter: MemoryAdapter(createMemoryStore()),
      providers: [appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'] })] as never,
      extensions: [
        termsExtension({
          version: '2026-01',
          html: '<p>Be excellent to each other.</p>',
          acceptedVersion: (userId) => accepted.get(userId) ?? null,
          recordAcceptance: (userId, v) => void accepted.set(userId, v),
        }),
      ],
    } as AuthConfig
    const client = new Client(config)
    const { callback } = await signInThroughProvider(client, 'op')
    expect(callback.headers.get('location')).toBe(STEP_PAGE)
    await client.send({ path: '/step/signin-completion', body: { csrfToken: await client.csrfToken(), event: 'terms.accept' } })
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
    expect([...accepted.values()]).toEqual(['2026-01'])
  })
})
