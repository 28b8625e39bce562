/**
 * Public types: the configuration, the callbacks and events, and the data shapes of spec §2.
 *
 * @module
 */
import type {
  Account,
  Adapter,
  AdapterSession,
  AdapterUser,
  Awaitable,
  CommonProviderOptions,
  Cookie,
  CookieSerializeOptions,
  CredentialInput,
  JWT,
  JWTOptions,
  Logger,
  LoggerInstance,
  Profile,
  Theme,
  User,
} from './shapes.js'
import type { FlowTrace } from './engine/trace.js'
import type { raw, skipCSRFCheck } from './symbols.js'
import type { OAuthConfig } from './oauth/types.js'
import type { EmailConfig } from './email/types.js'
import type { WebAuthnConfig } from './flows/webauthn/types.js'
import type { AuthStore } from './store/types.js'
import type { FeatureModule } from './modules.js'
import type { CompletionExtension, SignInCompletionContext } from '../machines/signin-completion.machine.js'
import type { AuditTrail, FlowInspector, OpenTelemetry } from './observe/brand.js'

// The data shapes of spec §2 and the store's type, public from here.
export type { Account, Awaitable, CommonProviderOptions, Cookie, CookieOption, CookieSerializeOptions } from './shapes.js'
export type { CredentialInput, JWT, JWTOptions, LoggerInstance, Profile, ProviderType, Theme, User, UserOptions } from './shapes.js'
export type { AuthStore } from './store/types.js'

/** The actions served under `basePath` (spec §4). */
export type AuthAction =
  | 'callback'
  | 'csrf'
  | 'error'
  | 'providers'
  | 'session'
  | 'signin'
  | 'signout'
  | 'verify-request'
  | 'webauthn-options'


/** The session exposed to clients (spec §2.1). */
export interface DefaultSession {
  user?: User
  /** ISO-8601 date at which the session expires. */
  expires: string
  /** Set when the built-in refresh of the provider's access token failed: sign in again. */
  error?: 'RefreshTokenError'
}

/** The session exposed to clients; extend through declaration merging. */
export interface Session extends DefaultSession {}


/** An entry of `GET /providers` (spec §2.6). */
export interface PublicProvider {
  id: string
  name: string
  type: string
  signinUrl: string
  callbackUrl: string
}

/** The internal response returned with `raw` (spec §2.7). */
export interface ResponseInternal<Body = unknown> {
  status?: number
  headers?: HeadersInit
  body?: Body
  redirect?: string
  cookies?: Cookie[]
}

/** Paths of custom pages (spec §2.9). */
export interface PagesOptions {
  signIn: string
  signOut: string
  error: string
  verifyRequest: string
  newUser: string
}

/** Values of the error page's `error` query parameter. */
export type ErrorPageParam = 'Configuration' | 'AccessDenied' | 'Verification'

/** Values of the sign-in page's `error` query parameter. */
export type SignInPageErrorParam =
  | 'Signin'
  | 'OAuthSignin'
  | 'OAuthCallbackError'
  | 'OAuthCreateAccount'
  | 'EmailCreateAccount'
  | 'Callback'
  | 'OAuthAccountNotLinked'
  | 'EmailSignin'
  | 'CredentialsSignin'
  | 'SessionRequired'



/** A credentials provider: the application checks what the user submitted (spec §5.2). */
export interface CredentialsConfig<
  Inputs extends Record<string, CredentialInput> = Record<string, CredentialInput>,
> extends CommonProviderOptions {
  type: 'credentials'
  credentials: Inputs
  /**
   * Checks the submitted credentials. Return the user, or `null` to reject; throw a
   * `CredentialsSignin` (or a subclass with its own `code`) to reject with a code.
   */
  authorize: (
    credentials: Partial<Record<keyof Inputs, unknown>>,
    request: Request,
  ) => Awaitable<User | null>
}

/** Any provider object. Provider kinds beyond credentials are typed by their own modules. */
export interface ProviderConfig extends CommonProviderOptions {
  options?: Record<string, unknown>
  [key: string]: unknown
}

/** A provider of any kind. */
// An OAuth provider's profile type only matters to its own `profile` mapping.
export type AnyProviderConfig = CredentialsConfig | OAuthConfig<any> | EmailConfig | WebAuthnConfig | ProviderConfig

/** A provider, or a function returning one (Auth.js accepts both). */
export type Provider = AnyProviderConfig | (() => AnyProviderConfig)

/** Parameters of the `signIn` callback. */
export interface SignInCallbackParams {
  user: User | AdapterUser
  account?: Account | null
  profile?: Profile
  email?: { verificationRequest?: boolean }
  credentials?: Record<string, unknown>
}

/** Parameters of the `jwt` callback. */
export interface JwtCallbackParams {
  token: JWT
  user?: User | AdapterUser
  account?: Account | null
  profile?: Profile
  trigger?: 'signIn' | 'signUp' | 'update'
  /** @deprecated use `trigger === 'signUp'` */
  isNewUser?: boolean
  /** Data sent by the client's `update()`; validate it before use. */
  session?: unknown
}

/** Parameters of the `session` callback. */
export interface SessionCallbackParams {
  session: Session & Partial<AdapterSession>
  token: JWT
  user: AdapterUser
  newSession?: unknown
  trigger?: 'update'
}

/** The callbacks (spec §2.14); all optional and possibly asynchronous. */
export interface CallbacksOptions {
  signIn?: (params: SignInCallbackParams) => Awaitable<boolean | string>
  redirect?: (params: { url: string; baseUrl: string }) => Awaitable<string>
  session?: (params: SessionCallbackParams) => Awaitable<Session | Record<string, unknown>>
  jwt?: (params: JwtCallbackParams) => Awaitable<JWT | null>
}

/** The event handlers (spec §6); errors they throw are logged and swallowed. */
export interface EventCallbacks {
  signIn?: (message: {
    user: User
    account?: Account | null
    profile?: Profile
    isNewUser?: boolean
  }) => Awaitable<void>
  signOut?: (
    message: { session: AdapterSession | null | undefined | void } | { token: JWT | null },
  ) => Awaitable<void>
  createUser?: (message: { user: User }) => Awaitable<void>
  updateUser?: (message: { user: User }) => Awaitable<void>
  linkAccount?: (message: {
    user: User | AdapterUser
    account: Account
    profile: User | AdapterUser
  }) => Awaitable<void>
  session?: (message: { session: Session; token: JWT }) => Awaitable<void>
}

/** Per-cookie overrides of names and attributes (spec §2.8). */
export type CookiesOptions = Partial<
  Record<
    | 'sessionToken'
    | 'callbackUrl'
    | 'csrfToken'
    | 'pkceCodeVerifier'
    | 'state'
    | 'nonce'
    | 'webauthnChallenge'
    | 'flowState',
    Partial<{ name: string; options: CookieSerializeOptions }>
  >
>

/**
 * A flow module as the config takes it (its full type, `FlowModule`, is in `core/flows/types.ts`;
 * named loosely here so that this leaf imports no flow type).
 */
export interface RegisteredFlow {
  readonly id: string
}

/** The configuration of {@link Auth} (spec §2.13). */
export interface AuthConfig {
  providers: Provider[]
  /** At least 32 random characters; an array rotates secrets (the first encrypts). */
  secret?: string | string[] | undefined
  adapter?: Adapter | undefined
  /** Where the handler is mounted. Default `/auth`. */
  basePath?: string | undefined
  callbacks?: CallbacksOptions | undefined
  cookies?: CookiesOptions | undefined
  debug?: boolean | undefined
  events?: EventCallbacks | undefined
  experimental?: { enableWebAuthn?: boolean | undefined } | undefined
  jwt?: Partial<JWTOptions> | undefined
  logger?: Partial<LoggerInstance> | undefined
  pages?: Partial<PagesOptions> | undefined
  redirectProxyUrl?: string | undefined
  /**
   * The origins a redirect proxy may forward a provider's callback to (the deployments sharing
   * the proxy), e.g. `['https://app.example.com', 'https://app-*.preview.example.com']`: a `*`
   * stands for part of the leftmost host label only. Default from `AUTH_REDIRECT_PROXY_ORIGINS`
   * (comma-separated). A sign-in behind a proxy starts only on one of these origins (or the
   * proxy's own), and the proxy forwards only to them: the origin sealed in `state` never comes
   * from request headers alone.
   */
  redirectProxyOrigins?: string[] | undefined
  session?: {
    strategy?: 'jwt' | 'database' | undefined
    /** Seconds of idleness after which a session expires. Default 30 days. */
    maxAge?: number | undefined
    /** Seconds between refreshes of the session's expiry. Default 1 day; 0 refreshes on every read. */
    updateAge?: number | undefined
    /**
     * Seconds a session may live from its sign-in, however active it is (OWASP ASVS V7.3.2): after
     * it, the user signs in again. Beside the idle `maxAge`; default none. JWT sessions carry their
     * sign-in time; database sessions need the adapter's `created` column (authchart's PostgreSQL
     * and memory adapters have it; a session row without it is checked against `maxAge` only).
     */
    absoluteMaxAge?: number | undefined
    /**
     * Database sessions only (ours; off by default, as in Auth.js): a session read within
     * `maxAge` seconds of the last database read serves the session and its user from a short-lived
     * sealed cookie beside the session token (`authjs.session-cache`), without a database round
     * trip. The cookie never outlives the row's expiry or the absolute lifetime, and `updateAge`
     * still extends the row as without it. Sign-out, sign-out everywhere, `revokeSession` and a
     * logout by the provider write a revocation marker to the `store` that every cached read
     * checks: with a shared store a revoked session is refused on the next read on every instance;
     * with the default in-memory store, on this instance only, and elsewhere within `maxAge`.
     */
    cache?: { maxAge: number } | undefined
    generateSessionToken?: (() => string) | undefined
  } | undefined
  skipCSRFCheck?: typeof skipCSRFCheck | undefined
  raw?: typeof raw | undefined
  theme?: Theme | undefined
  /**
   * Where counters and one-time claims live (attempt limits, single-use values): on the server,
   * never only in a cookie. Default: this process's memory; give a shared store to run several
   * instances.
   */
  store?: AuthStore | undefined
  /**
   * Limits on attempts, counted in the `store` so they hold across instances. On by default:
   * credentials sign-ins are limited per identifier (the provider's first credential field that
   * is not a password; default 10 per 15 minutes) and per client address (the address the
   * integration gives through `setClientAddress`, IPv6 counted per /64; default 100 per 15
   * minutes). Over a limit, `authorize` is not called and the browser is sent back with
   * `?error=CredentialsSignin&code=rate_limited&retryAfter=<seconds>`, whether the account exists
   * or not. `false` turns them off (E-mail sends and codes have their own limits on the provider).
   *
   * When the store cannot count (it is down), the attempt is refused with 503 and `Retry-After`
   * (fail closed); `failOpen: true` lets it through uncounted instead (a `rate-limit-unchecked`
   * warning each time).
   */
  /**
   * Step-up re-authentication: `stepUp({ maxAge?, factors?, aal?, actions? })` from
   * `authchart/step-up`. A stale session at a built-in sensitive action (`add-passkey`,
   * `enrol-second-factor`, `remove-second-factor`, `revoke-sessions`, `link-account`,
   * `change-password`, `manage-api-keys`, `manage-organization`) is sent to the re-authentication page
   * (`{basePath}/step/reauthenticate`), and the action resumes after it. Without it, such a session (no factor proven in the last ten minutes) is sent to sign in again.
   */
  stepUp?: FeatureModule<'step-up'> | undefined
  /**
   * Two-step verification: `totp({ issuer? })` from `authchart/second-factor` (the enrolment at
   * `{basePath}/two-factor`, the code at sign-in, backup codes). Without it, a user with a stored
   * second factor cannot sign in (the sign-in is refused, never let past the factor).
   */
  secondFactor?: FeatureModule<'second-factor'> | undefined
  /**
   * Organisations, memberships, roles and invitations: `organizations({ roles? })` from
   * `authchart/organizations`. The adapter must store them (the memory and PostgreSQL adapters do).
   */
  organizations?: FeatureModule<'organizations'> | undefined
  /**
   * API keys: `apiKeys({ prefix?, header?, rotationOverlap? })` from `authchart/api-keys` (keys a
   * user creates for programs, checked with `verifyApiKey`). Needs an adapter with the API-key
   * methods (the memory and PostgreSQL adapters have them).
   */
  apiKeys?: FeatureModule<'api-keys'> | undefined
  /**
   * Service accounts: `serviceAccounts({ issuer?, audience?, tokenTtl?, signingKeys? })` from
   * `authchart/service-accounts` (programs that obtain access tokens by the client credentials
   * grant, checked with `verifyServiceToken`). Needs an adapter with the service-account methods.
   */
  serviceAccounts?: FeatureModule<'service-accounts'> | undefined
  /**
   * The device authorization grant (RFC 8628): `deviceAuthorization({ clients, expiresIn?,
   * interval? })` from `authchart/device-authorization` (a CLI or a TV asks for a code, the user
   * approves it at `{basePath}/device`, the device gets a session as a bearer token, read with
   * `deviceSession`).
   */
  deviceAuthorization?: FeatureModule<'device-authorization'> | undefined
  rateLimit?:
    | false
    | {
        credentials?:
          | false
          | {
              perIdentifier?: number | undefined
              perAddress?: number | undefined
              window?: number | undefined
              failOpen?: boolean | undefined
            }
          | undefined
      }
    | undefined
  /**
   * What happens when the adapter or the store does not answer. Every adapter and store call has
   * a timeout (`adapterTimeout`, default 5000 ms; `storeTimeout`, default 2000 ms); a call that
   * times out, or fails because its part is unreachable (a refused or dropped connection, a server
   * shutting down, an exhausted pool), answers the request 503 with `Retry-After: retryAfter`
   * (default 5 seconds), and the part is tried again on the next request. `isOutage` adds the
   * application's own test for "this error means the database is down" to the built-in one
   * (Node's socket errors, PostgreSQL's connection SQLSTATEs, `pg`, `ioredis` and Prisma's
   * connection errors).
   */
  availability?:
    | {
        adapterTimeout?: number | undefined
        storeTimeout?: number | undefined
        retryAfter?: number | undefined
        isOutage?: ((error: unknown) => boolean) | undefined
      }
    | undefined
  /**
   * The application's own sign-in steps (a terms page, a profile step), inserted at the sign-in
   * completion's extension points. Checked when the config is loaded: an extension can neither
   * skip the second factor nor issue a session. See `defineExtension`.
   */
  extensions?: FlowExtension[] | undefined
  /**
   * Flows of the application's own, each a flow module (`FlowModule` of `authchart/flows`): a way
   * of signing in with its provider type, routes, pages and adapter needs. Registered beside the
   * built-in flows; the sign-in completion (the `signIn` callback, the second factor, the session)
   * ends every one of them.
   */
  flows?: readonly RegisteredFlow[] | undefined
  /**
   * Trust the request's host. `true` trusts any host (as Auth.js does: fine behind a proxy that
   * sets `Host`, or with `AUTH_URL`); a list trusts only these hosts (`'app.example.com'`, any
   * port), hosts with a port (`'localhost:3000'`) or origins (`'https://app.example.com'`), and
   * answers a request for any other host 400 before any route runs, so a forged `Host` never
   * reaches an e-mailed link, a redirect or a cookie. `AUTH_URL`'s host is added to a list by
   * `setEnvDefaults`.
   */
  trustHost?: boolean | readonly string[] | undefined
  useSecureCookies?: boolean | undefined
  /**
   * Development hook: receives a trace of every flow run (states, event types, transitions taken;
   * never payloads). The flow inspector and the model-based tests use it.
   */
  inspect?: ((trace: FlowTrace) => void) | undefined
  /**
   * Development only: the live flow inspector at `{basePath}/__flows`, as `flowInspector()` from
   * `authchart/inspector` (charts with the transitions recent requests took, and the last traces).
   * Served only when `NODE_ENV` is `development` or `test`, and only to loopback clients unless
   * `clients: 'any'`; refused with 404 otherwise. Omitted, it costs a request nothing.
   */
  inspector?: FlowInspector | undefined
  /**
   * The audit trail, as `auditTrail({ sink })` from `authchart/audit`: one event per request that
   * advances a sign-in flow (states passed, outcome, user, provider, factors) and one per lifecycle
   * change, to a function, the debug logger or a store. See docs/guides/audit.md.
   */
  audit?: AuditTrail | undefined
  /**
   * OpenTelemetry, as `openTelemetry()` from `authchart/telemetry`: a span per request with a
   * child span per effect, and metrics. See docs/guides/telemetry.md for the names.
   */
  telemetry?: OpenTelemetry | undefined
}

/** What a step's page is rendered from. */
export interface StepView {
  /** Where the page's form posts to (`{basePath}/step/<flow>`, CSRF-checked). */
  action: string
  csrfToken: string
  /** Why the last answer was refused, if it was (e.g. `InvalidCode`). */
  error: string | null
  /** The user signing in, as far as the page may show it. */
  user: { name?: string | null; email?: string | null; image?: string | null } | null
  /** The flow's context as the page may show it: the extension's own fields. */
  data: Record<string, unknown>
  /** The theme of the built-in pages, with its defaults. */
  theme: Required<Theme>
}

/**
 * Renders a step's page: its title and the HTML inside the card (escape what you interpolate;
 * `stepForm` builds the form with the CSRF token).
 */
export type StepPage = (view: StepView) => { title: string; html: string }

/** The context an extension's effects and guards see: the completion's, plus its own fields. */
export type ExtendedContext = SignInCompletionContext & Record<string, unknown>

/**
 * What an extension's effect may use besides the flow's context: the request time (the `at` its
 * result event carries), the logger and the configured adapter.
 */
export interface ExtensionEnv {
  /** Request time, epoch seconds: stamp it on the result event. */
  readonly at: number
  readonly logger: Logger
  readonly adapter: Adapter | undefined
}

/**
 * An extension's effect: its I/O, answering with its output (the `<name>.done` event) or
 * `fail(reason)` (`<name>.failed`); a throw is `<name>.failed` with reason `threw`, the error
 * logged. An effect that answers with the whole result event (`{ type: '<name>.done', output,
 * at: env.at }`) works too.
 */
export type ExtensionEffect = (
  context: ExtendedContext,
  env: ExtensionEnv,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  trigger: { type: string; [key: string]: any },
) => unknown

/** An application's extension of the sign-in completion. */
export interface FlowExtension extends CompletionExtension {
  /** The effects its states are tagged with (`effect.<name>`), by name. */
  effects?: Record<string, ExtensionEffect>
  /** The pages its waiting states name in `meta.step.page`, by name. */
  pages?: Record<string, StepPage>
  /**
   * What the error page tells the user when one of its states refuses with `denyBecause(reason)`,
   * by reason: a plain-text sentence (e.g. `declined: 'You declined the terms, so you are not signed in.'`).
   * Without one, the page says Auth.js's "You do not have permission to sign in."
   */
  denials?: Record<string, string>
}
