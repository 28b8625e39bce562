/**
 * The configuration the engine runs on, after `resolveConfig`: validated, defaulted and frozen,
 * and the environment every effect and handler receives under it (`RequestContext`). A leaf:
 * it imports only other type modules.
 *
 * @module
 */
import type { Struct } from 'superstruct'
import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate'
import type { SignInCompletionContext } from '../../machines/signin-completion.machine.js'
import type { FlowDefinition, FlowEnv, CookiesOptions, ParsedRequest, RoutedAction } from '../engine/types.js'
import type { FlowTrace } from '../engine/trace.js'
import type { ResolvedEmailProvider } from '../email/types.js'
import type { ResolvedOAuthProvider } from '../oauth/types.js'
import type { Adapter, AdapterMethod, AdapterView, CookieOption, JWTOptions, Logger, ProviderSession } from '../shapes.js'
import type { AuthStore } from '../store/types.js'
import type { ResolvedApiKeysOptions } from '../api-keys/types.js'
import type { ResolvedServiceAccountsOptions } from '../service-accounts/types.js'
import type { ResolvedDeviceAuthorizationOptions } from '../device-authorization/types.js'
import type { ObserverKind } from '../observe/brand.js'
import type { FlowOutcome } from '../../machines/shared/outcome.js'
import type { OrganizationAdapterMethod } from '../organizations/types.js'
import type { FEATURE, SecondFactorCodeCheck, SensitiveActionName, StepUpDemand, StepUpOptions } from '../modules.js'
import type { AuthConfig, FlowExtension, PagesOptions, ProviderConfig, ProviderType, ResponseInternal, StepPage, Theme } from '../types.js'

/** An allowlist entry, compiled. */
export interface OriginPattern {
  /** The entry as normalised (`https://app.example.com`, `https://pr-*.example.com`). */
  readonly source: string
  readonly test: (origin: string) => boolean
}

/** A provider after its `options` were merged over its defaults. */
export interface ResolvedProvider {
  readonly id: string
  readonly name: string
  readonly type: ProviderType
  /** The merged provider object, with every provider-specific field. */
  readonly config: Readonly<ProviderConfig>
  /** OAuth and OIDC providers: endpoints, checks and mappers, normalised. */
  readonly oauth?: ResolvedOAuthProvider
  /** E-mail providers: link mode, codes, limits and lifetime, defaulted and checked. */
  readonly email?: ResolvedEmailProvider
}

/** The session settings after defaults. */
export interface ResolvedSessionOptions {
  readonly strategy: 'jwt' | 'database'
  readonly maxAge: number
  readonly updateAge: number
  /** Seconds a session may live from its sign-in, however active (`null`: no absolute limit). */
  readonly absoluteMaxAge: number | null
  /** The session cache of database sessions (`null`: off, every read asks the adapter). */
  readonly cache: { readonly maxAge: number } | null
  readonly generateSessionToken: () => string
}

/** A limit of attempts: `points` per `window` seconds. */
export interface ResolvedLimit {
  readonly points: number
  readonly window: number
  /** Let an attempt through uncounted when the store cannot count it (default: refuse it). */
  readonly failOpen?: boolean
}

/** What the engine does when a part does not answer (the config's `availability`, defaulted). */
export interface ResolvedAvailability {
  /** Milliseconds an adapter call may take. */
  readonly adapterTimeout: number
  /** Milliseconds a store call may take. */
  readonly storeTimeout: number
  /** Seconds a 503 answer asks the client to wait (`Retry-After`). */
  readonly retryAfter: number
  /** Whether a failure means the part is unavailable (the built-in list, or the application's). */
  readonly isOutage: (error: unknown) => boolean
}

/** The rate limits after defaults; `null` where turned off. */
export interface ResolvedRateLimits {
  /** Credentials attempts per identifier and per client address (IPv6 per /64). */
  readonly credentials: { readonly perIdentifier: ResolvedLimit; readonly perAddress: ResolvedLimit } | null
}

/** The configuration the engine runs on: validated, defaulted and frozen. */
export interface ResolvedConfig {
  /** The user's object: callbacks and events are looked up on it at call time. */
  readonly source: AuthConfig
  readonly basePath: string
  readonly secrets: readonly [string, ...string[]]
  readonly providers: readonly ResolvedProvider[]
  readonly providerById: ReadonlyMap<string, ResolvedProvider>
  readonly session: ResolvedSessionOptions
  readonly jwt: {
    readonly secret: string | string[]
    readonly maxAge: number
    /** Custom codec from `config.jwt`, if any; the built-in one is used otherwise. */
    readonly encode?: JWTOptions['encode']
    readonly decode?: JWTOptions['decode']
  }
  readonly pages: Readonly<Partial<PagesOptions>>
  readonly theme: Readonly<Required<Theme>>
  readonly trustHost: boolean
  /** `trustHost` given as a list: only these hosts are answered (see `trusted-hosts.ts`). */
  readonly trustedHosts?: TrustedHosts
  readonly csrfDisabled: boolean
  readonly raw: boolean
  readonly debug: boolean
  /** Cookie settings for plain-HTTP and HTTPS requests; `useSecureCookies` pins one. */
  readonly cookies: { readonly plain: CookiesOptions; readonly secure: CookiesOptions }
  readonly useSecureCookies?: boolean
  readonly redirectProxyUrl?: string
  /**
   * Origins a redirect proxy may send a callback to (`redirectProxyOrigins`, or
   * `AUTH_REDIRECT_PROXY_ORIGINS`); the proxy's own origin is always allowed.
   */
  readonly redirectProxyOrigins: readonly OriginPattern[]
  readonly adapter?: Adapter
  readonly experimental: { readonly enableWebAuthn: boolean }
  readonly logger: Logger
  /** Server-side counters and one-time claims: the configured store, or one in memory. */
  readonly store: AuthStore
  /**
   * Whether the config named its `store` (one shared by several instances): only then does a JWT
   * session read ask the store for a sign-out everywhere, so the default read does no I/O.
   */
  readonly sharedStore: boolean
  /** The step-up module (`stepUp()`), if the configuration names it; the core's freshness rule otherwise. */
  readonly stepUp: StepUpModule | undefined
  /** The second-factor module (`totp()`), if the configuration names it. */
  readonly secondFactor: SecondFactorModule | undefined
  /** The organisations module (`organizations()`), if the configuration names it. */
  readonly organizations: OrganizationsModule | undefined
  /** The API-key module (`apiKeys()`), if the configuration names it. */
  readonly apiKeys: ApiKeysModule | undefined
  /** The service-account module (`serviceAccounts()`), if the configuration names it. */
  readonly serviceAccounts: ServiceAccountsModule | undefined
  /** The device authorization module (`deviceAuthorization()`), if the configuration names it. */
  readonly deviceAuthorization: DeviceAuthorizationModule | undefined
  /** Attempt limits, counted in the store (on by default). */
  readonly rateLimit: ResolvedRateLimits
  /** Timeouts of adapter and store calls, and the answer when a part is unavailable. */
  readonly availability: ResolvedAvailability
  /** The application's extensions of the sign-in completion (checked, as given). */
  readonly extensions: readonly FlowExtension[]
  /** The sign-in completion with those extensions, built once when the config is loaded. */
  readonly completion: FlowDefinition<AnyStateMachine, RequestContext>
  /**
   * Every flow this configuration can run: the built-in ones (the sign-in completion with the
   * extensions) and the application's own, in the registry's order.
   */
  readonly flows: readonly FlowModule[]
  /** The flows by id. */
  readonly flowById: ReadonlyMap<string, FlowModule>
  /** The flow serving each provider type as a first factor. */
  readonly firstFactorByType: ReadonlyMap<string, FlowModule>
  readonly inspect?: (trace: FlowTrace) => void
  /**
   * The audit trail, OpenTelemetry, the flow inspector and the `inspect` callback, as configured,
   * in that order; empty when none is, and a request then checks this length and nothing else.
   */
  readonly observers: readonly Observer[]
}

/** The outcome of resolving a config: the resolved config, or the error to answer every request with. */
export type Resolution =
  | { ok: true; config: ResolvedConfig }
  | { ok: false; error: Error; logger: Logger; source: AuthConfig }

/** What a handler or an effect knows about the request it serves, under a resolved config. */
export type RequestContext = FlowEnv<ResolvedConfig, ResolvedProvider>

/**
 * The context a flow's effects receive: the request context, with the adapter as the view of the
 * methods the flow declares (`Needs`); without any, the adapter as configured (perhaps none).
 */
export type FlowContext<Needs extends AdapterMethod = never> = [Needs] extends [never]
  ? RequestContext
  : Omit<RequestContext, 'adapter'> & { readonly adapter: AdapterView<Needs> }

// The routing table's shape and a flow module's declaration live here, beside the context they
// are written against, so that naming them closes no circle of type modules.

/** A route served by a flow. */
export interface FlowBinding<Params = unknown> {
  /** The flow, or how to find it for this request (an application's extended flow). */
  flow: FlowDefinition<AnyStateMachine, RequestContext> | ((ctx: RequestContext) => FlowDefinition<AnyStateMachine, RequestContext>)
  /** Shape of the request input (`body` for POST, `query` for GET); a mismatch is a 400. */
  params: Struct<Params, unknown>
  /**
   * A cheaper check that accepts exactly what `params` accepts without coercion, tried first
   * (superstruct's walk is measurable on the sign-in path). When it fails, `params` decides.
   */
  accepts?: (input: unknown) => input is Params
  /** Builds the request event from the validated input. */
  toEvent: (ctx: RequestContext, params: Params) => EventObject & { at: number }
  /** Continue the flow sealed in the flow cookie instead of starting a new one (or say per request). */
  resumes?: boolean | ((ctx: RequestContext, params: Params) => boolean)
  /**
   * A step: the request event is read from the body against the events the waiting state
   * declares (`meta.step.events`), once the flow is reopened; `toEvent` is not used.
   */
  step?: boolean
  /** The cookie carrying the flow at rest; by default `<flowState name>.<machine id>`. */
  envelopeCookie?: (ctx: RequestContext) => CookieOption
  /** The error a refused envelope (missing, tampered, foreign, spent) is reported as; by default the flow-state error itself. */
  refused?: (ctx: RequestContext, error: Error) => Error | Promise<Error>
  /** Runs before the flow; a response here answers the request instead (a redirect proxy hop). */
  intercept?: (ctx: RequestContext, params: Params) => Promise<ResponseInternal | undefined>
  /**
   * Another flow that waits, sealed in this browser, for exactly this request takes it instead (a
   * re-authentication's answer at the provider's registered callback). Its flow is resumed from
   * its own cookie, unbound to the provider in the path.
   */
  divert?: (ctx: RequestContext, params: Params) => Promise<FlowBinding<Params> | undefined>
}

/** A plain handler. */
export type Handler = (ctx: RequestContext) => Promise<ResponseInternal> | ResponseInternal

/** One entry of the routing table. */
export interface Route {
  method: 'GET' | 'POST'
  action: RoutedAction
  /**
   * `none`: the path has no provider segment; otherwise the provider's type (a built-in one, or
   * one a registered flow serves).
   */
  provider: 'none' | ProviderType | (string & Record<never, never>)
  /** Require the double-submit CSRF token in the body. */
  csrf?: boolean
  /**
   * The handler hands a CSRF token to the client; a cookie is minted when missing. A function
   * decides per request (a page that shows a form only sometimes).
   */
  csrfToken?: boolean | ((ctx: RequestContext) => boolean)
  /** Resolve `callbackUrl` (body, query, then cookie) through the `redirect` callback. */
  callbackUrl?: boolean
  /** Errors answer 400 with a JSON `null` body instead of redirecting (an API route). */
  failure?: 'json-null'
  /**
   * The route acts for the signed-in user (reads who is signed in: to answer with their session,
   * link an account or passkey to them, manage their sessions or second factors). It asks the one
   * authority, `core/session/current.ts`, and with a session that has ended it acts exactly as
   * for someone signed out. A test runs every flagged route with dead sessions, and every other
   * route must not read the session at all.
   */
  actsForUser?: true
  /** Sign-out: ends whatever session the cookie names, live or not, and acts for no one. */
  endsSession?: true
  /**
   * The freshness gate: the built-in sensitive action this request is (or `undefined` when this
   * one is not, e.g. a passkey sign-in rather than a registration). `dispatch` lets it run only
   * when the signed-in user proved a factor recently enough for the action's policy; otherwise the
   * request is sealed in a re-authentication flow and resumes after it. Checked before the route
   * runs, like CSRF, so no built-in sensitive action reaches its effect without it (a test holds
   * the routing table to it).
   */
  stepUp?: (
    ctx: RequestContext,
  ) => SensitiveActionName | undefined
  serve: FlowBinding<never> | Handler
}

/** A stored user and account, or a refusal to link them. */
export type StoredUser =
  | { user: Record<string, unknown>; account: Record<string, unknown>; isNewUser: boolean }
  | { notLinked: 'OAuthAccountNotLinked' | 'AccountNotLinked' }

/**
 * Stores the verified identity of one first factor: finds, links or creates the user. Throws on
 * outages (logged, the Configuration error); returns `notLinked` (after logging its own error)
 * when the identity belongs to someone else.
 */
export type UserStore = (ctx: RequestContext, context: SignInCompletionContext) => Promise<StoredUser>

/** A provider as its form on the built-in sign-in page sees it. */
export interface SignInFormProvider {
  readonly id: string
  readonly name: string
  readonly type: string
  /** Where the form starts the flow: `<authUrl>/signin/<id>`. */
  readonly signinUrl: string
  /** Where the form answers: `<authUrl>/callback/<id>`. */
  readonly callbackUrl: string
  /** The merged provider object. */
  readonly config: Readonly<Record<string, unknown>>
}

/** What the forms of one sign-in page share: ids unique on the page, labels apart, one first focus. */
export interface SignInPageFields {
  /** `preferred` (Auth.js's id) unless the page already has an element with it; `fallback` then. */
  id(preferred: string, fallback: string): string
  /** ` autofocus` for the first field of the page that takes typing; nothing after. */
  autofocus(type: string): string
  /** The label field `field` of provider `providerId` shows (`label` unless another field reads the same). */
  label(providerId: string, field: string, label: string): string
}

/** The sign-in page as a form is drawn on it. */
export interface SignInPage {
  readonly csrfToken: string
  /** The `callbackUrl` the page was opened with. */
  readonly callbackUrl: string | undefined
  /** The address the page was opened with (`?email=`), for an e-mail field. */
  readonly email: string | undefined
  /** `<origin><basePath>`, where a page script sends its requests. */
  readonly authUrl: string
  readonly fields: SignInPageFields
}

/** A field of a sign-in form and the label it has on its own. */
export interface SignInFormField {
  readonly field: string
  readonly label: string
  /**
   * Where a field of another form reads the same, the first field with this flag keeps the plain
   * label and the others name their provider (the e-mail provider's "Email" beside a passkey's).
   */
  readonly keepsLabel?: boolean
}

/** A way of signing in's form on the built-in sign-in page (Auth.js's markup for the built-in ones). */
export interface SignInForm {
  /** Whether `provider` has a form on the page (by default it has). */
  readonly shows?: (provider: SignInFormProvider) => boolean
  /** The user types into it: the page sets it apart from the buttons by a rule, as Auth.js does. */
  readonly typed?: boolean
  /** Its fields with their own labels, which the page keeps apart from other forms' fields. */
  readonly fields?: (provider: SignInFormProvider) => readonly SignInFormField[]
  /** The form of `provider`. */
  readonly draw: (provider: SignInFormProvider, page: SignInPage) => string
  /** What follows the page's cards once for every provider with this form (its script), if anything. */
  readonly scripts?: (providers: readonly SignInFormProvider[], page: SignInPage) => string
}

/** What a way of signing in declares: the sign-in completion and the sign-in page read it. */
export interface FirstFactor {
  /** The provider types it serves (`credentials`; `oauth` and `oidc`; …). */
  readonly providerTypes: readonly string[]
  /** How it proves who the user is, as an RFC 8176 `amr` value (`pwd`, `fed`, `hwk`, …). */
  readonly amr: string
  /** How the sign-in completion stores its user. */
  readonly storeUser: UserStore
  /**
   * For a first factor whose provider may end the session later (OpenID Connect logout): the
   * provider session a sign-in came through, the claims naming it in a JWT, and how the session
   * issued for it is recorded.
   */
  readonly providerSessions?: ProviderSessions
  /** Its form on the built-in sign-in page (none: its providers are not on the page). */
  readonly signInForm?: SignInForm
}

/** A session the completion issued: the JWT's user, or the database session's token. */
export type IssuedSession = { strategy: 'jwt'; userId: string } | { strategy: 'database'; sessionToken: string }

/** The provider sessions of a first factor (see {@link FirstFactor.providerSessions}). */
export interface ProviderSessions {
  /** The provider session a sign-in with `account` came through, if its provider can end it. */
  readonly of: (account: Record<string, unknown>) => ProviderSession | null
  /** The claims that name it in a JWT. */
  readonly claims: (session: ProviderSession) => Record<string, unknown>
  /** Records the session issued for it, so that the provider's logout finds it. */
  readonly record: (ctx: RequestContext, session: ProviderSession, issued: IssuedSession) => Promise<void>
}

/** What a flow needs of the adapter, checked when the config is loaded. */
export interface AdapterNeeds {
  /**
   * The `MissingAdapter` message when the flow cannot run without an adapter under `config`
   * (`undefined`: it can).
   */
  readonly missing?: (config: ResolvedConfig) => string | undefined
  /** The adapter methods the flow's effects call under `config`. */
  readonly methods: (config: ResolvedConfig) => readonly AdapterMethod[]
}

/** The pages of a flow's waiting states (`GET/POST /step/<flow id>`). */
export interface FlowSteps {
  /** Page name (a waiting state's `meta.step.page`) → its renderer. */
  readonly pages: Readonly<Record<string, StepPage>>
  /** What the pages may show of the flow's context; `null` when it is not the requester's to see. */
  readonly view: (ctx: RequestContext, context: Record<string, unknown>) => Promise<Record<string, unknown> | null> | Record<string, unknown> | null
  /**
   * The error an answer to a step is reported as when its sealed flow is refused (missing,
   * tampered, spent: a second post of the same page); by default the flow-state error itself.
   */
  readonly refused?: (ctx: RequestContext, error: Error) => Error | Promise<Error>
}

/**
 * One flow, declared in one place: its chart and effects, the requests that start or resume it,
 * its pages, what it needs of the adapter and, for a way of signing in, its first factor.
 */
export interface FlowModule {
  /** The flow's id: its chart's id. */
  readonly id: string
  /**
   * The flow as the engine runs it: the chart (pure, from `machines/`), the struct its sealed
   * context must fit, its effects. A flow whose code comes with its providers reads it once loaded.
   */
  readonly flow: FlowDefinition<AnyStateMachine, RequestContext>
  /**
   * Loads the flow's code, for a flow that comes with its providers (not bundled otherwise); the
   * handler loads it before a configuration that runs the flow answers its first request.
   */
  readonly load?: () => Promise<unknown>
  /** Whether a configuration runs this flow (shown by the inspector, its adapter needs checked). */
  readonly runs: (config: ResolvedConfig) => boolean
  /** The adapter methods it calls, when the configuration runs it. */
  readonly adapter?: AdapterNeeds
  /** The requests that start or resume it, with their CSRF, `callbackUrl` and failure policy. */
  readonly routes?: readonly Route[]
  /** The pages of its waiting states. */
  readonly steps?: FlowSteps
  /** For a way of signing in: its provider types, `amr`, and how its user is stored. */
  readonly firstFactor?: FirstFactor
}

// The observers' hooks (see `core/observe/types.ts`): declared here, beside the configuration
// that holds them, so that the type modules stay free of import circles.

/** A lifecycle change a request made (signing out, revoking sessions, adding a factor). */
export type LifecycleChange =
  | 'sign-out'
  | 'sign-out-everywhere'
  | 'session-revoked'
  | 'second-factor-enrolled'
  | 'second-factor-removed'
  | 'passkey-added'
  | 'account-linked'
  | 'rate-limited'
  | 'reauthenticated'
  | 'api-key-created'
  | 'api-key-revoked'
  | 'api-key-rotated'
  | 'api-key-refused'
  | 'device-authorization-requested'
  | 'device-authorization-approved'
  | 'device-authorization-denied'
  | 'device-authorization-redeemed'

/** Who a lifecycle change was for: the user, the provider, the API key's prefix (never its secret). */
export interface LifecycleSubject {
  userId?: string
  provider?: string
  /** `<prefix>_<id>`: the public start of the key, never its secret. */
  apiKey?: string
}

/** How a request was answered: the failure its flow reported, or what its handling threw. */
export type Answered = { failure?: { type: string; code?: string } } | { error: unknown }

/** What the observers read of the request's source: its headers and the client's address. */
export interface ObservedSource {
  header(name: string): string | null
  readonly clientAddress: string | undefined
}

/** A flow run as the observers see it (the engine's `FlowRun`). */
export interface ObservedRun {
  readonly snapshot: AnyMachineSnapshot
  readonly outcome: FlowOutcome
  /** True when the flow waits for another request and is sealed. */
  readonly resting: boolean
  readonly trace: FlowTrace
}

/** Wraps the call of the effect `name`, returning what the call returns (or throws). */
export type EffectWrapper = (
  name: string,
  call: () => EventObject | PromiseLike<EventObject>,
) => EventObject | PromiseLike<EventObject>

/** What a value is resolved with, once per configuration. */
export interface ObserverSettings {
  readonly logger: Logger
  readonly secrets: readonly string[]
  /** The application's own store (shared by its instances), when it configured one. */
  readonly sharedStore?: AuthStore | undefined
}

/**
 * The hooks of one observer, each optional; they run only for a configuration that has it. A hook
 * never fails the request: the observers catch their own errors.
 */
export interface Observer {
  /** The option it came from (`inspect`: the trace callback). */
  readonly kind: ObserverKind | 'inspect'
  /** Whether flow runs record the transition ids they take (a lookup per step), now. */
  readonly traceTransitions?: () => boolean
  /** A request is about to be dispatched (`route` is its templated path). */
  readonly onRequestStart?: (request: ParsedRequest, route: string, provider: string | undefined) => void | Promise<void>
  /** Wraps each effect of the request (a span, a timing). */
  readonly effectHook?: (request: ParsedRequest) => EffectWrapper | undefined
  /** A flow run's trace, when the run ended (at rest, final or failed). */
  readonly onFlowStep?: (request: ParsedRequest, trace: FlowTrace) => void
  /** How a flow run ended (`providerId` of the request's provider, if any). */
  readonly onFlowRun?: (request: ParsedRequest, flow: string, providerId: string | undefined, run: ObservedRun) => void
  /** A lifecycle change the request made. */
  readonly onLifecycle?: (request: ParsedRequest, kind: LifecycleChange, who: LifecycleSubject) => void
  /**
   * A lifecycle change outside a request to `Auth` (an API key refused by `verifyApiKey` in the
   * application's own route), with the outcome it had; delivered at once.
   */
  readonly onStandalone?: (source: ObservedSource, kind: LifecycleChange, who: LifecycleSubject, outcome?: { error: string }) => Promise<void>
  /** An Auth.js event the request emitted (`signOut`, `linkAccount`, ...). */
  readonly onEmitted?: (request: ParsedRequest, name: string, message: unknown) => void
  /** The request's flows are done: how it was answered. Awaited before the answer is sent. */
  readonly onOutcome?: (request: ParsedRequest, source: ObservedSource, answered: Answered) => Promise<void>
  /** The answer is decided: its status, or what was thrown. */
  readonly onRequestEnd?: (request: ParsedRequest, status: number | undefined, error?: unknown) => void
  /** A page served below `basePath` at `path` (GET only), before the request is parsed. */
  readonly page?: {
    readonly path: string
    readonly respond: (config: ResolvedConfig, request: Request) => Promise<Response>
  }
  /** `GET {basePath}/audit` for the signed-in `user`: their own activity. */
  readonly activity?: (ctx: RequestContext, user: { id: string }, page: boolean) => Promise<ResponseInternal>
}

/** A compiled `trustHost` list: host names (any port), hosts with a port, and origins. */
export interface TrustedHosts {
  readonly hostnames: ReadonlySet<string>
  readonly hosts: ReadonlySet<string>
  readonly origins: ReadonlySet<string>
}

/** What checking a code needs: the user, the challenge the code answers, the code, the time. */
export interface SecondFactorCodeInput {
  adapter: NonNullable<RequestContext['adapter']>
  store: AuthStore
  secrets: readonly string[]
  userId: string
  /** The challenge the code answers: its wrong attempts are counted under this id. */
  challenge: string
  code: string
  /** Epoch seconds. */
  at: number
  /**
   * Who sends the code, for counting it: the client's address (counted by its bucket), and the
   * id of a known device (one that completed a sign-in of this user with a second factor before,
   * or signed in with the user's passkey), which is counted on its own. Without it the code counts
   * as from one unknown client.
   */
  client?: SecondFactorClient
  /**
   * Called once per counting window (a quarter hour), by the check that first finds the
   * user's codes spent by clients that are not known devices (someone who knows the password may
   * be trying codes): the sign-in tells the owner. Its failure never fails the check.
   */
  onCodesTried?: () => Promise<void>
}

/** Who sends a second-factor code (see {@link SecondFactorCodeInput.client}). */
export interface SecondFactorClient {
  /** The client's address as the integration gave it. */
  address?: string | undefined
  /** A known device's id, verified by the caller (a signed device cookie or the first factor). */
  device?: string | undefined
}

/** A page a flow of the feature ends with, by the name its chart gives it. */
export type OutcomePage = (ctx: RequestContext, data: Record<string, unknown>) => ResponseInternal

/** The value of `organizations: organizations({ … })`: its roles and the adapter methods it calls. */
export interface OrganizationsModule {
  readonly [FEATURE]: 'organizations'
  /** The built-in roles and the configuration's custom ones. */
  readonly roles: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>
  /** The adapter methods the feature calls: a configuration whose adapter lacks one is refused at load. */
  readonly adapterMethods: readonly OrganizationAdapterMethod[]
  /** Its routes (`{basePath}/organization/…`), added to the configuration's routing table. */
  readonly routes: readonly Route[]
  /**
   * The session the session route answers with, its `activeOrganizationId` re-checked: set while
   * `userId`'s membership of the chosen organisation is active, dropped otherwise.
   */
  readonly sessionRead: (ctx: RequestContext, userId: string | undefined, session: unknown) => Promise<unknown>
  /** The invitation settings: lifetime, limits, sender. */
  readonly invitations: import('../organizations/invitations.js').ResolvedInvitationOptions
}

/** The value of `secondFactor: totp()`: the TOTP enrolment flow and the code check of a sign-in. */
export interface SecondFactorModule {
  readonly [FEATURE]: 'second-factor'
  /** The flows the feature adds (the enrolment at `{basePath}/two-factor`). */
  readonly flows: readonly FlowModule[]
  /** The issuer shown in the authenticator app (default: the request's host). */
  readonly issuer: string | undefined
  /** Checks (and spends) a TOTP or backup code of the user, counting attempts in the store. */
  readonly checkCode: (input: SecondFactorCodeInput) => Promise<SecondFactorCodeCheck>
  /** The pages its flows end with (`backup-codes`). */
  readonly outcomePages: Readonly<Record<string, OutcomePage>>
}

/** The value of `serviceAccounts: serviceAccounts({ … })`: its options and the adapter methods it calls. */
export interface ServiceAccountsModule {
  readonly [FEATURE]: 'service-accounts'
  readonly options: ResolvedServiceAccountsOptions
  /** Answers `POST {basePath}/oauth/token` and `GET {basePath}/jwks`; `undefined` for any other path. */
  readonly serve: (request: Request, config: AuthConfig) => Promise<Response | undefined>
  /** The adapter methods the feature calls: a configuration whose adapter lacks one is refused at load. */
  readonly adapterMethods: readonly AdapterMethod[]
}

/** The value of `deviceAuthorization: deviceAuthorization({ … })`: its options, its page's routes and its device endpoints. */
export interface DeviceAuthorizationModule {
  readonly [FEATURE]: 'device-authorization'
  readonly options: ResolvedDeviceAuthorizationOptions
  /** Its routes (`{basePath}/device`, the approval page), added to the configuration's routing table. */
  readonly routes: readonly Route[]
  /**
   * Answers `POST {basePath}/device_authorization` and the device code grant at
   * `POST {basePath}/oauth/token`; `undefined` for any other request (another grant type is the
   * service accounts' to answer, when they are configured).
   */
  readonly serve: (request: Request, config: AuthConfig) => Promise<Response | undefined>
}

/** The value of `apiKeys: apiKeys({ … })`: the key options, the adapter methods it calls, its routes. */
export interface ApiKeysModule {
  readonly [FEATURE]: 'api-keys'
  readonly options: ResolvedApiKeysOptions
  /** The adapter methods the feature calls: a configuration whose adapter lacks one is refused at load. */
  readonly adapterMethods: readonly AdapterMethod[]
  /** The flows the feature adds (none: its routes serve no chart). */
  readonly flows: readonly FlowModule[]
  /** Its routes (`{basePath}/api-keys`), added to the configuration's routing table. */
  readonly routes: readonly Route[]
}

/** The value of `stepUp: stepUp({ … })`: the policies and the re-authentication flow. */
export interface StepUpModule {
  readonly [FEATURE]: 'step-up'
  /** The policies as configured (defaults applied per request). */
  readonly options: Readonly<StepUpOptions>
  /** The flows the feature adds (the re-authentication at `{basePath}/step/reauthenticate`). */
  readonly flows: readonly FlowModule[]
  /** The re-authentication flow a stopped sensitive action starts. */
  readonly flow: FlowDefinition<AnyStateMachine, RequestContext>
  /** The gate's verdict for `action` under the configured policy: `undefined` lets it through. */
  readonly demand: (ctx: RequestContext, action: SensitiveActionName) => Promise<StepUpDemand | undefined>
  /** The re-authentication waiting at a provider's callback for this answer, if any. */
  readonly waiting: (ctx: RequestContext, params: Record<string, string>) => Promise<FlowBinding<Record<string, string>> | undefined>
  /** What resumes after the proof: the stopped request, as the re-authentication seals it. */
  readonly intentOf: (ctx: RequestContext) => unknown
  /** The answer to a stopped request: the re-authentication page for a browser, 401 for a fetch. */
  readonly required: (ctx: RequestContext, demand: StepUpDemand, url: string) => ResponseInternal
  /** The pages its flows end with (`resume`). */
  readonly outcomePages: Readonly<Record<string, OutcomePage>>
}
