/**
 * The fuzz suite's world: one configuration with a provider of every type the routing table
 * serves, the outside parties those providers talk to (a real OpenID Provider and a loopback
 * OAuth 2 server standing in for GitHub), what a legitimate user knows (the credentials), and the
 * instruments the oracles read (flow traces through `config.inspect`, adapter writes, the log).
 *
 * A route added to the table is fuzzed without touching this file as long as its provider type
 * has a provider here; when it has none, {@link World.providersOf} fails and says so.
 *
 * @module
 */
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../../adapters/memory.js'
import { assertConfig, cookiesFor, type ResolvedConfig } from '../../../core/config/resolve-config.js'
import type { CookiesOptions } from '../../../core/cookies.js'
import type { FlowTrace } from '../../../core/engine/trace.js'
import { routesOf, type Route } from '../../../core/http/routes.js'
import { Auth, customFetch } from '../../../core/index.js'
import type { AuthConfig, ProviderType } from '../../../core/types.js'
import Credentials from '../../../providers/credentials.js'
import Email from '../../../providers/email.js'
import GitHub from '../../../providers/github.js'
import Passkey from '../../../providers/passkey.js'
import Password from '../../../providers/password.js'
import { testHasher } from '../../password-flow/fixtures.js'
import { ORIGIN, SECRET } from '../../fixtures/http.js'
import { loopbackFetch, startOAuth2Server, toLoopback, type RunningOAuth2Server } from '../../fixtures/oauth2-server.js'
import { startOidcProvider, visitProvider, type ProviderReturn, type RunningOidcProvider } from '../../fixtures/oidc-provider.js'
import { appProvider, CLIENT_SECRET, opClient } from '../../oauth/helpers.js'
import { LogCapture, type AllowedTargets } from './oracles.js'
import { everyFlow } from '../../../core/flows/catalogue.js'
import { totp } from '../../../core/second-factor.js'
import { stepUp } from '../../../core/step-up.js'
import { organizations } from '../../../core/organizations.js'
import { apiKeys } from '../../../core/api-keys.js'

/** Every route authchart ships: the built-in flows' and the optional features'. */
/** The organisations and API-key features: their routes join the table and their modules the config, as an app that imports them. */
const organizationsFeature = organizations()
const apiKeysFeature = apiKeys()
const builtInRoutes = [...routesOf(everyFlow), ...organizationsFeature.routes, ...apiKeysFeature.routes]

/** The user the credentials provider accepts, and the fields of its sign-in form. */
export const FUZZ_USER = { id: 'fuzz-user', name: 'Carol', email: 'carol@example.com' }
export const FUZZ_CREDENTIALS = { username: 'carol', password: 'correct horse battery staple' }

/** Known-good values by form field name: what a legitimate client would type. */
export const FIELD_VALUES: Readonly<Record<string, string>> = {
  ...FUZZ_CREDENTIALS,
  email: FUZZ_USER.email,
}

const GITHUB_ORIGINS = ['https://github.com', 'https://api.github.com']

/** The servers outside the application, shared by every world of a test file. */
export interface OutsideParties {
  op: RunningOidcProvider
  github: RunningOAuth2Server
  /** Origins of real services mapped to their loopback stand-ins. */
  loopback: Record<string, string>
  close(): Promise<void>
}

/** The base paths the worlds use; the OP knows the callback under each. */
const BASE_PATHS = ['/auth', '/api/auth']

/** Starts the OpenID Provider and the GitHub stand-in on loopback. */
export async function startOutsideParties(): Promise<OutsideParties> {
  const redirects = (id: string) => ({ redirect_uris: BASE_PATHS.map((base) => `${ORIGIN}${base}/callback/${id}`) })
  const op = await startOidcProvider({
    clients: [
      await opClient('client_secret_basic', 'op', redirects('op')),
      await opClient('client_secret_basic', 'op-post', { ...redirects('op-post'), response_modes: ['form_post'] } as never),
    ],
  })
  const github = await startOAuth2Server({
    clientId: 'github-app',
    clientSecret: CLIENT_SECRET,
    clientAuth: 'client_secret_basic',
    authorizePath: '/login/oauth/authorize',
    tokenPath: '/login/oauth/access_token',
    api: { '/user': () => ({ id: 4242, login: 'octo', name: 'Octo', email: 'octo@example.com' }) },
  })
  const loopback = Object.fromEntries(GITHUB_ORIGINS.map((origin) => [origin, github.origin]))
  return {
    op,
    github,
    loopback,
    async close() {
      await Promise.all([op.close(), github.close()])
    },
  }
}

/** Options of a world. */
export interface WorldOptions {
  strategy: 'jwt' | 'database'
  /** Default `/auth`. */
  basePath?: string
  /** Use the application's own pages (`pages.*`) instead of the built-in ones. */
  customPages?: boolean
  /** `debug: true`: the debug log is captured and judged too. */
  debug?: boolean
  /** The routing table to fuzz (an application's extended table), default the built-in one. */
  table?: readonly Route[]
  /** The handler over that table, default {@link Auth}. */
  handler?: (request: Request, config: AuthConfig) => Promise<Response>
}

/** A configuration under fuzz, with its instruments. */
export class World {
  readonly origin = ORIGIN
  readonly basePath: string
  readonly config: AuthConfig
  readonly resolved: ResolvedConfig
  readonly cookies: CookiesOptions
  readonly table: readonly Route[]
  readonly log = new LogCapture()
  /** The database (every world has one: e-mail and passkeys need an adapter, as in Auth.js). */
  readonly store: MemoryStore
  /** The e-mail messages sent (links and codes), newest last. */
  readonly outbox: { identifier: string; url: string; code?: string }[] = []
  /** Traces of flow runs since the last {@link take}. */
  private traces: FlowTrace[] = []
  /** Sessions the adapter created since the last {@link take}. */
  private created = 0
  private readonly handler: (request: Request, config: AuthConfig) => Promise<Response>

  constructor(
    readonly parties: OutsideParties,
    readonly options: WorldOptions,
  ) {
    this.basePath = options.basePath ?? '/auth'
    this.table = options.table ?? builtInRoutes
    this.handler = options.handler ?? (Auth as never)
    this.store = createMemoryStore()
    const adapter = this.countingAdapter(MemoryAdapter(this.store))
    const { op, loopback } = parties
    this.config = {
      secret: SECRET,
      secondFactor: totp(),
      stepUp: stepUp(),
      organizations: organizationsFeature,
      apiKeys: apiKeysFeature,
      trustHost: true,
      basePath: this.basePath,
      session: { strategy: options.strategy },
      adapter,
      experimental: { enableWebAuthn: true },
      // Attempts are still counted on every credentials request, but the preparation signs the one
      // fuzz user in thousands of times: limits no run reaches (test/store/rate-limit.test.ts and
      // the credentials model test drive the refusal).
      rateLimit: { credentials: { perIdentifier: 1_000_000, perAddress: 1_000_000 } },
      ...(options.debug ? { debug: true } : {}),
      ...(options.customPages
        ? { pages: { signIn: '/login', signOut: '/goodbye', error: '/oops', verifyRequest: '/check-mail', newUser: '/welcome' } }
        : {}),
      inspect: (trace: FlowTrace) => {
        this.traces.push(trace)
      },
      providers: [
        Credentials({
          credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
          authorize: (c: Record<string, unknown>) =>
            c.username === FUZZ_CREDENTIALS.username && c.password === FUZZ_CREDENTIALS.password ? { ...FUZZ_USER } : null,
        }),
        // The OP's one account may first sign in through either client; 'op' links to it by
        // e-mail, so signing in through 'op' always works (the preparation relies on it), while
        // 'op-post' keeps refusing the link (OAuthAccountNotLinked stays fuzzed).
        appProvider(op.issuer, 'client_secret_basic', 'op', {
          checks: ['pkce', 'state', 'nonce'],
          logout: true,
          allowDangerousEmailAccountLinking: true,
        }),
        appProvider(op.issuer, 'client_secret_basic', 'op-post', {
          checks: ['state'],
          authorization: { params: { response_mode: 'form_post' } },
        }),
        GitHub({ clientId: 'github-app', clientSecret: CLIENT_SECRET, [customFetch]: loopbackFetch(loopback) }),
        Email({
          code: true,
          sendVerificationRequest: async ({ identifier, url, code }: { identifier: string; url: string; code?: string }) => {
            this.outbox.push({ identifier, url, ...(code ? { code } : {}) })
          },
        }),
        Passkey(),
        // Its links join the outbox, so their tokens are fuzzed like the e-mail provider's.
        Password({ hasher: testHasher(), send: (mail) => void this.outbox.push({ identifier: mail.to, url: mail.url }) }),
      ],
    } as AuthConfig
    this.resolved = assertConfig(this.config)
    this.cookies = cookiesFor(this.resolved, new URL(ORIGIN))
  }

  /** Sends a request to the handler (exceptions propagate: the caller's oracle judges them). */
  send(request: Request): Promise<Response> {
    return this.handler(request, this.config)
  }

  /** What the instruments saw since the last call. */
  take(): { traces: FlowTrace[]; sessionsCreated: number } {
    const taken = { traces: this.traces, sessionsCreated: this.created }
    this.traces = []
    this.created = 0
    return taken
  }

  /** The ids of the configured providers of `type`. */
  providersOf(type: Exclude<Route['provider'], 'none'>): string[] {
    const ids = this.resolved.providers.filter((p) => p.type === type).map((p) => p.id)
    if (ids.length === 0) {
      throw new Error(
        `The routing table serves provider type "${type}" but the fuzz world configures no such provider: add one to test/security/fuzz/world.ts so its routes are fuzzed.`,
      )
    }
    return ids
  }

  /** The type of a configured provider. */
  typeOf(providerId: string): ProviderType | undefined {
    return this.resolved.providerById.get(providerId)?.type
  }

  /** Path of an action under the base path. */
  path(action: string, providerId?: string): string {
    return `${this.basePath}/${action}${providerId === undefined ? '' : `/${providerId}`}`
  }

  /** The providers' authorization endpoints (`origin + pathname`). */
  authorizationEndpoints(): string[] {
    return [`${this.parties.op.issuer}/auth`, 'https://github.com/login/oauth/authorize']
  }

  /** Where a redirect may lead besides our origin: the providers' authorization and logout endpoints. */
  allowedTargets(): AllowedTargets {
    return { endpoints: [...this.authorizationEndpoints(), `${this.parties.op.issuer}/session/end`] }
  }

  /**
   * Plays the browser at the provider: follows the authorization URL through the provider's pages
   * until it sends the user back to one of our callbacks.
   */
  async visitProvider(authorizationUrl: string): Promise<ProviderReturn> {
    const back = await visitProvider(toLoopback(authorizationUrl, this.parties.loopback), `${ORIGIN}${this.basePath}/callback/`)
    return back
  }

  /** Values that must never appear in a log line or a response body. */
  staticSecrets(): string[] {
    // Every e-mail token and code sent so far: a log line or a page that shows one is a leak.
    const sent = this.outbox.flatMap(({ url, code }) => [new URL(url).searchParams.get('token') ?? '', code ?? ''])
    return [SECRET, CLIENT_SECRET, ...sent.filter((value) => value.length >= 6)]
  }

  private countingAdapter<A extends { createSession: (...args: never[]) => unknown }>(adapter: A): A {
    const createSession = adapter.createSession.bind(adapter)
    adapter.createSession = ((...args: never[]) => {
      this.created += 1
      return createSession(...args)
    }) as A['createSession']
    return adapter
  }
}
