/**
 * The configuration the engine runs on, after `resolveConfig`: validated, defaulted and frozen,
 * and the environment every effect and handler receives under it (`RequestContext`). A leaf:
 * it imports only other type modules.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import type { FlowDefinition, FlowEnv, CookiesOptions } from '../engine/types.js'
import type { FlowTrace } from '../engine/trace.js'
import type { ResolvedEmailProvider } from '../email/types.js'
import type { ResolvedOAuthProvider } from '../oauth/types.js'
import type { Adapter, AdapterMethod, AdapterView, JWTOptions, Logger } from '../shapes.js'
import type { AuthStore } from '../store/types.js'
import type { ResolvedAudit } from '../audit/types.js'
import type { TelemetryOptions } from '../telemetry/types.js'
import type { AuthConfig, FlowExtension, PagesOptions, ProviderConfig, ProviderType, Theme } from '../types.js'

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
  /** Attempt limits, counted in the store (on by default). */
  readonly rateLimit: ResolvedRateLimits
  /** Timeouts of adapter and store calls, and the answer when a part is unavailable. */
  readonly availability: ResolvedAvailability
  /** The application's extensions of the sign-in completion (checked, as given). */
  readonly extensions: readonly FlowExtension[]
  /** The sign-in completion with those extensions, built once when the config is loaded. */
  readonly completion: FlowDefinition<AnyStateMachine, RequestContext>
  readonly inspect?: (trace: FlowTrace) => void
  /** The flow inspector's settings, when enabled. */
  readonly inspector?: { readonly traces: number; readonly clients: 'loopback' | 'any' }
  /** The audit trail's sinks and settings, when configured. */
  readonly audit?: ResolvedAudit
  /** OpenTelemetry spans and metrics, when configured (loaded on the first request). */
  readonly telemetry?: TelemetryOptions
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
