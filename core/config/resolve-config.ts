/**
 * Turns a user's `AuthConfig` into the frozen, validated `ResolvedConfig` the engine runs on.
 * Resolution happens once per config object; every request after that reads the cached result.
 *
 * @module
 */
import { StructError } from 'superstruct'
import { defaultCookies, mergeCookies } from '../cookies.js'
import {
  AuthError,
  ConfigError,
  DuplicateConditionalUI,
  ExperimentalFeatureNotEnabled,
  MissingAdapter,
  MissingAdapterMethods,
  MissingAuthorize,
  MissingSecret,
  MissingWebAuthnAutocomplete,
} from '../errors.js'
import type { JWTOptions } from '../jwt.js'
import { createLogger } from '../logger.js'
import { instrumentAdapter, missingMethods } from '../session/adapter.js'
import type { AuthConfig, ProviderConfig, Theme } from '../types.js'
import type { FlowTrace } from '../engine/trace.js'
import { resolveOAuthProvider, type OAuthConfig } from '../oauth/provider.js'
import { guardStore, memoryAuthStore } from '../store/index.js'
import { DEFAULT_AVAILABILITY, isOutageError } from '../outage.js'
import { resolveEmailProvider } from '../email/provider.js'
import { ExtensionError, type FlowExtension } from '../extensions.js'
import { SIGN_IN_COMPLETION } from '../../machines/signin-completion.logic.js'
import { builtInFlows } from '../flows/registry.js'
import { signInCompletionFlowFor } from '../flows/signin-completion/flow.js'
import type { FlowModule } from '../flows/types.js'
import { compileOriginPattern, type OriginPattern } from './origins.js'
import { MIN_SECRET_LENGTH, type ValidatedConfig } from './structs.js'
import { compileTrustedHosts } from './trusted-hosts.js'
import { checkProviderFlows, featureFlowsOf, featureModulesOf } from './features.js'
import type {
  ResolvedAvailability,
  ResolvedConfig,
  ResolvedLimit,
  ResolvedProvider,
  ResolvedRateLimits,
  ResolvedSessionOptions,
  Resolution,
} from './types.js'
import { ObserverOptionsError, resolveObservers } from './observers.js'
import { validateConfig } from './validate.js'

export { callbacksOf, cookiesFor, eventsOf } from './read.js'
export type { ResolvedConfig, ResolvedLimit, ResolvedProvider, ResolvedRateLimits, ResolvedSessionOptions, Resolution }

/**
 * Default credentials limits: generous for people (ten tries per account, a hundred per network,
 * per quarter hour), tight for a guessing script (2,000 guesses at an account take 50 hours).
 */
export const DEFAULT_CREDENTIALS_LIMITS = { perIdentifier: 10, perAddress: 100, window: 15 * 60 } as const

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)

/**
 * Deep-merges plain objects (arrays and everything else are replaced), as Auth.js's `merge`: an
 * `undefined` in a source leaves the target's value, so `Google({ issuer: undefined })` (what
 * `setEnvDefaults` passes a factory when `AUTH_GOOGLE_ISSUER` is unset) keeps Google's issuer.
 */
export function mergeDeep<T extends Record<string, unknown>>(
  target: T,
  ...sources: (Record<string, unknown> | undefined)[]
): T {
  const out: Record<string, unknown> = { ...target }
  for (const source of sources) {
    if (!source) continue
    for (const key of Object.keys(source)) {
      if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue
      const value = source[key]
      if (value === undefined) continue
      const current = out[key]
      out[key] = isPlainObject(value) && isPlainObject(current) ? mergeDeep(current, value) : value
    }
  }
  return out as T
}

function normalizeProvider(input: unknown, path: number, redirectProxyUrl?: string): ResolvedProvider {
  const provider = (typeof input === 'function' ? (input as () => unknown)() : input) as
    | ProviderConfig
    | undefined
  if (!isPlainObject(provider)) {
    throw new ConfigError(`config.providers.${path}: must be a provider object`, ['providers', path])
  }
  const { options, ...defaults } = provider as ProviderConfig
  const merged = mergeDeep(defaults as Record<string, unknown>, options) as ProviderConfig
  for (const symbolKey of Object.getOwnPropertySymbols(provider)) {
    ;(merged as unknown as Record<symbol, unknown>)[symbolKey] = (provider as unknown as Record<symbol, unknown>)[symbolKey]
  }
  if (options) {
    for (const symbolKey of Object.getOwnPropertySymbols(options)) {
      ;(merged as unknown as Record<symbol, unknown>)[symbolKey] = (options as unknown as Record<symbol, unknown>)[symbolKey]
    }
  }
  const { id, type } = merged
  if (typeof id !== 'string' || !/^[A-Za-z0-9._~-]+$/.test(id)) {
    throw new ConfigError(
      `config.providers.${path}.id: must be a non-empty string of letters, digits, ".", "_", "~" or "-"`,
      ['providers', path, 'id'],
    )
  }
  const name = typeof merged.name === 'string' ? merged.name : id
  const isOAuth = type === 'oauth' || type === 'oidc'
  // Endpoints are checked first, as in Auth.js (its assert-config test expects InvalidEndpoints).
  const oauth = isOAuth
    ? resolveOAuthProvider({ ...merged, id, name } as unknown as OAuthConfig<Record<string, unknown>>, redirectProxyUrl)
    : undefined
  if (oauth && (typeof merged.clientId !== 'string' || merged.clientId === '')) {
    // Without it the sign-in would send the user to the provider with `client_id=` and fail there.
    const variable = `AUTH_${id.toUpperCase().replace(/-/g, '_')}_ID`
    throw new ConfigError(
      `config.providers.${path} ("${id}"): clientId is missing. Set ${variable} in the environment ` +
        `(read by the framework integrations and setEnvDefaults) or pass clientId to the provider`,
      ['providers', path, 'clientId'],
    )
  }
  return Object.freeze({
    id,
    name,
    type,
    config: Object.freeze(merged),
    ...(oauth ? { oauth } : {}),
    ...(type === 'email' ? { email: resolveEmailProvider(merged as Record<string, unknown>, path) } : {}),
  })
}

/**
 * Auth.js's message, exactly: applications match on it. How to make a secret is the default
 * logger's second line (`[auth][hint]`) and the documentation's.
 */
const MISSING_SECRET_MESSAGE = 'Please define a `secret`'

/** No secret at all: unset, empty, or `[]` (what `setEnvDefaults` leaves without `AUTH_SECRET`). */
function isEmptySecret(value: unknown): boolean {
  return value === undefined || value === '' || (Array.isArray(value) && value.length === 0)
}

/**
 * A `ConfigError` for a failed validation that carries no received value. superstruct's
 * `StructError` embeds the value in its message and keeps it in `value` and `branch`: for
 * `secret` (or a client secret, a private key, a token misplaced in the config) that would print
 * the secret into the server log. The cause is a value-free copy whose message is the main one.
 */
function toConfigError(error: StructError, option?: string): Error {
  if (option === undefined && error.path.length === 1 && error.path[0] === 'secret' && isEmptySecret(error.value)) {
    return new MissingSecret(MISSING_SECRET_MESSAGE)
  }
  // A union (e.g. `secret`: string or array) fails as a whole; its refinement says why.
  const failure = error.failures().find((f) => f.refinement !== undefined) ?? error
  const fullPath = option === undefined ? [...failure.path] : [option, ...failure.path]
  const path = fullPath.join('.')
  const message =
    failure.type === 'never'
      ? `config.${path}: unknown option`
      : failure.refinement
        ? `config.${path}: ${failure.message}`
        : `config.${path}: expected ${failure.type}, received ${describe(failure.value)}`
  const cause = Object.assign(new Error(message), {
    name: 'StructError',
    path: fullPath,
    type: failure.type,
    ...(failure.refinement ? { refinement: failure.refinement } : {}),
  })
  return new ConfigError(message, fullPath, { cause })
}

/** What was received, by kind only: the value itself may be a secret. */
function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

function checkProviders(providers: readonly ResolvedProvider[]): void {
  const seen = new Set<string>()
  for (const [index, provider] of providers.entries()) {
    if (seen.has(provider.id)) {
      throw new ConfigError(
        `config.providers.${index}: a provider with id "${provider.id}" is already configured`,
        ['providers', index, 'id'],
      )
    }
    seen.add(provider.id)
    if (provider.type === 'credentials' && typeof provider.config.authorize !== 'function') {
      throw new MissingAuthorize(
        'Must define an authorize() handler to use credentials authentication provider',
      )
    }
  }
}

/**
 * Checks the WebAuthn providers as Auth.js does (reference §5.4): the experimental flag, one
 * conditional-UI provider at most, a `webauthn` autocomplete field for it. Returns whether there
 * is any, so the caller requires an adapter and its methods.
 *
 * @throws {ExperimentalFeatureNotEnabled} without `experimental.enableWebAuthn`.
 * @throws {DuplicateConditionalUI} | {MissingWebAuthnAutocomplete} | {AuthError} for a provider
 *   misconfigured.
 */
function checkWebAuthnProviders(providers: readonly ResolvedProvider[], enabled: boolean): boolean {
  const webauthn = providers.filter((p) => p.type === 'webauthn')
  if (webauthn.length === 0) return false
  if (!enabled) {
    throw new ExperimentalFeatureNotEnabled(
      'WebAuthn is an experimental feature. To enable it, set `experimental.enableWebAuthn` to `true` in your config',
    )
  }
  let conditional = false
  for (const { id, config } of webauthn) {
    const version = config.simpleWebAuthnBrowserVersion
    if (typeof version === 'string' && !/^v\d+(?:\.\d+){0,2}$/.test(version)) {
      throw new AuthError(
        `Invalid provider config for "${id}": simpleWebAuthnBrowserVersion "${version}" must be a valid semver string.`,
      )
    }
    if (!config.enableConditionalUI) continue
    if (conditional) {
      throw new DuplicateConditionalUI(
        "Multiple webauthn providers have 'enableConditionalUI' set to True. Only one provider can have this option enabled at a time",
      )
    }
    conditional = true
    const fields = Object.values((config.formFields ?? {}) as Record<string, { autocomplete?: unknown }>)
    if (!fields.some((f) => String(f.autocomplete ?? '').includes('webauthn'))) {
      throw new MissingWebAuthnAutocomplete(
        `Provider "${id}" has 'enableConditionalUI' set to True, but none of its formFields have 'webauthn' in their autocomplete param`,
      )
    }
  }
  return true
}

/**
 * How to fix a missing adapter: integrations throw the error at boot, where only its message is
 * seen, so the message itself says it (after Auth.js's sentence).
 */
const ADAPTER_HINT =
  "To start, `adapter: MemoryAdapter()` from 'authchart/adapters/memory' (in memory: lost on restart); " +
  "in production, `PostgresAdapter(pool)` from 'authchart/adapters/postgres' or any Auth.js adapter."

function resolve(source: AuthConfig): ResolvedConfig {
  const features = featureModulesOf(source)
  let validated
  try {
    validated = validateConfig(source)
  } catch (error) {
    throw error instanceof StructError ? toConfigError(error) : error
  }
  const logger = createLogger(validated as Parameters<typeof createLogger>[0])
  const secretInput = validated.secret
  if (secretInput === undefined || isEmptySecret(secretInput)) throw new MissingSecret(MISSING_SECRET_MESSAGE)
  const secrets = (Array.isArray(secretInput) ? [...secretInput] : [secretInput]) as [
    string,
    ...string[],
  ]
  // Validation coerces objects into shallow copies; keep the application's own provider and
  // adapter objects, whose methods may live on a prototype.
  const providers = (source.providers ?? []).map((provider, index) =>
    normalizeProvider(provider, index, validated.redirectProxyUrl),
  )
  checkProviders(providers)
  checkProviderFlows(providers)
  const hasWebAuthn = checkWebAuthnProviders(providers, validated.experimental.enableWebAuthn)

  const given = validated.adapter === undefined ? undefined : source.adapter
  const strategy = validated.session.strategy ?? (given ? 'database' : 'jwt')
  const { extensions, completion } = checkedExtensions(source.extensions)
  const flows = flowsOf(source.flows, completion, featureFlowsOf(features, providers))
  const firstFactorByType = firstFactorsOf(flows)
  checkProviderTypes(providers, firstFactorByType)
  // What the adapter check needs to know of the config before it is built.
  const loading = { providers, session: { strategy }, adapter: given } as unknown as ResolvedConfig
  const running = flows.filter((flow) => flow.runs(loading))
  for (const flow of running) {
    const missing = given ? undefined : flow.adapter?.missing?.(loading)
    if (missing !== undefined) throw new MissingAdapter(`${missing} ${ADAPTER_HINT}`)
  }
  if (!given && features.organizations) throw new MissingAdapter(`Organizations are stored by the adapter. ${ADAPTER_HINT}`)
  if (features.apiKeys && !given) throw new MissingAdapter(`API keys require an adapter. ${ADAPTER_HINT}`)
  if (features.serviceAccounts && !given) throw new MissingAdapter(`Service accounts require an adapter. ${ADAPTER_HINT}`)
  if (given) {
    const required = [
      ...running.flatMap((flow) => flow.adapter?.methods(loading) ?? []),
      ...(features.organizations?.adapterMethods ?? []),
      ...(features.apiKeys?.adapterMethods ?? []),
      ...(features.serviceAccounts?.adapterMethods ?? []),
    ]
    const missing = missingMethods(given, [...new Set(required)])
    if (missing.length > 0) {
      throw new MissingAdapterMethods(`Required adapter methods were missing: ${missing.join(', ')}`)
    }
  }
  const availability = resolveAvailability(validated.availability)
  const adapter = given ? instrumentAdapter(given, logger, availability) : undefined
  // The application's own object (methods may live on a prototype), else one per config.
  const store = source.store ? guardStore(source.store, availability) : memoryAuthStore()
  let observers: ResolvedConfig['observers']
  try {
    observers = resolveObservers(source, validated.inspect as ((trace: FlowTrace) => void) | undefined, {
      logger,
      secrets,
      sharedStore: source.store ? store : undefined,
    })
  } catch (error) {
    const failure = error instanceof ObserverOptionsError ? error.failure : error
    throw failure instanceof StructError && error instanceof ObserverOptionsError ? toConfigError(failure, error.kind) : failure
  }
  const overrides = validated.cookies as Parameters<typeof mergeCookies>[1]
  const basePath = validated.basePath.length > 1 ? validated.basePath.replace(/\/+$/, '') : validated.basePath
  if (validated.debug) logger.warn('debug-enabled')
  if (secrets.slice(1).some((secret) => secret.length < MIN_SECRET_LENGTH)) logger.warn('short-secret-for-reading')
  if (hasWebAuthn) logger.warn('experimental-webauthn')
  // A step after the first sign-in then runs on every sign-in: nothing records that it was completed.
  if (source.extensions?.some((e) => e.at === 'afterFirstSignIn') && !(adapter?.getCompletedSteps && adapter.recordCompletedStep)) {
    logger.warn('after-first-sign-in-unrecorded')
  }
  // A JWT session is read from its own cookie: there is no database round trip for a cache to save.
  if (strategy === 'jwt' && validated.session.cache) logger.warn('session-cache-ignored')

  return Object.freeze({
    source,
    basePath,
    secrets,
    providers: Object.freeze(providers),
    providerById: new Map(providers.map((p) => [p.id, p])),
    session: Object.freeze({
      strategy,
      maxAge: validated.session.maxAge,
      updateAge: validated.session.updateAge,
      absoluteMaxAge: validated.session.absoluteMaxAge ?? null,
      // Only database sessions have a round trip to save.
      cache:
        strategy === 'database' && validated.session.cache
          ? Object.freeze({ maxAge: validated.session.cache.maxAge })
          : null,
      generateSessionToken:
        (validated.session.generateSessionToken as (() => string) | undefined) ??
        (() => crypto.randomUUID()),
    }),
    jwt: Object.freeze({
      secret: validated.jwt?.secret ?? secretInput,
      maxAge: validated.jwt?.maxAge ?? validated.session.maxAge,
      encode: validated.jwt?.encode as JWTOptions['encode'] | undefined,
      decode: validated.jwt?.decode as JWTOptions['decode'] | undefined,
    }),
    pages: Object.freeze({ ...validated.pages }),
    theme: Object.freeze({ ...validated.theme }) as Required<Theme>,
    trustHost: validated.trustHost === true || Array.isArray(validated.trustHost),
    ...(Array.isArray(validated.trustHost) ? { trustedHosts: compileTrustedHosts(validated.trustHost) } : {}),
    csrfDisabled: validated.skipCSRFCheck !== undefined,
    raw: validated.raw !== undefined,
    debug: validated.debug,
    cookies: Object.freeze({
      plain: mergeCookies(defaultCookies(false), overrides),
      secure: mergeCookies(defaultCookies(true), overrides),
    }),
    useSecureCookies: validated.useSecureCookies,
    redirectProxyUrl: validated.redirectProxyUrl,
    redirectProxyOrigins: Object.freeze(
      (validated.redirectProxyOrigins ?? []).map((entry) => compileOriginPattern(entry) as OriginPattern),
    ),
    adapter,
    experimental: Object.freeze({ ...validated.experimental }),
    logger,
    store,
    sharedStore: source.store !== undefined,
    stepUp: features.stepUp,
    secondFactor: features.secondFactor,
    organizations: features.organizations,
    apiKeys: features.apiKeys,
    serviceAccounts: features.serviceAccounts,
    deviceAuthorization: features.deviceAuthorization,
    rateLimit: resolveRateLimits(validated.rateLimit),
    availability,
    extensions,
    completion,
    flows,
    flowById: new Map(flows.map((flow) => [flow.id, flow])),
    firstFactorByType,
    inspect: validated.inspect as ((trace: FlowTrace) => void) | undefined,
    observers,
  } satisfies ResolvedConfig)
}

/**
 * The application's extensions, checked now so that an unsafe one fails the config at load.
 *
 * @throws {ConfigError} naming the extension and what it may not do.
 */
function checkedExtensions(
  given: FlowExtension[] | undefined,
): Pick<ResolvedConfig, 'extensions' | 'completion'> {
  const extensions = given && given.length > 0 ? Object.freeze([...given]) : EMPTY_EXTENSIONS
  try {
    // Checked by building it: the completion requests run is this one, not a second build.
    return { extensions, completion: signInCompletionFlowFor(extensions) }
  } catch (error) {
    if (error instanceof ExtensionError) throw new ConfigError(`config.extensions: ${error.message}`, ['extensions'])
    throw error
  }
}
const EMPTY_EXTENSIONS: readonly FlowExtension[] = Object.freeze([])

/**
 * The flows of a configuration: the built-in ones, with the sign-in completion as the application's
 * extensions make it (built once, here), those its feature modules and provider presets bring,
 * and the application's own after them.
 *
 * @throws {ConfigError} for a flow that is not a flow module, or a flow id taken twice.
 */
function flowsOf(
  given: AuthConfig['flows'],
  completion: ResolvedConfig['completion'],
  features: readonly FlowModule[],
): readonly FlowModule[] {
  const flows: FlowModule[] = [...builtInFlows, ...features].map((flow) =>
    flow.id === SIGN_IN_COMPLETION && flow.flow !== completion ? { ...flow, flow: completion } : flow,
  )
  const seen = new Set(flows.map((flow) => flow.id))
  for (const [index, registered] of (given ?? []).entries()) {
    const flow = registered as FlowModule
    if (seen.has(flow.id)) {
      throw new ConfigError(`config.flows.${index}: a flow with id "${flow.id}" is already registered`, ['flows', index, 'id'])
    }
    seen.add(flow.id)
    flows.push(flow)
  }
  return Object.freeze(flows)
}

/** The flow serving each provider type as a first factor. */
function firstFactorsOf(flows: readonly FlowModule[]): ReadonlyMap<string, FlowModule> {
  const byType = new Map<string, FlowModule>()
  for (const flow of flows) {
    for (const type of flow.firstFactor?.providerTypes ?? []) {
      const other = byType.get(type)
      if (other) throw new ConfigError(`config.flows: "${flow.id}" and "${other.id}" both serve providers of type "${type}"`, ['flows'])
      byType.set(type, flow)
    }
  }
  return byType
}

/** Every provider's type is served by a flow. */
function checkProviderTypes(providers: readonly ResolvedProvider[], byType: ReadonlyMap<string, FlowModule>): void {
  for (const [index, provider] of providers.entries()) {
    if (!byType.has(provider.type)) {
      throw new ConfigError(
        `config.providers.${index}.type: no flow serves providers of type "${provider.type}" (one of ${[...byType.keys()].join(', ')})`,
        ['providers', index, 'type'],
      )
    }
  }
}

const resolutions = new WeakMap<object, Resolution>()

/**
 * Validates and freezes `config`, once per config object. Later mutations of the object are not
 * seen (except callbacks and events, looked up at call time): pass a new object to reconfigure.
 */
export function resolveConfig(source: AuthConfig): Resolution {
  let resolution = resolutions.get(source)
  if (resolution === undefined) {
    try {
      resolution = { ok: true, config: resolve(source) }
    } catch (error) {
      const reported =
        error instanceof AuthError || error instanceof ConfigError
          ? error
          : new ConfigError(`config: ${(error as Error).message}`, [], { cause: error })
      resolution = {
        ok: false,
        error: reported,
        logger: createLogger(source as Parameters<typeof createLogger>[0]),
        source,
      }
    }
    resolutions.set(source, resolution)
  }
  return resolution
}

/** Throws the configuration error, if any; for integrations that resolve at boot. */
export function assertConfig(source: AuthConfig): ResolvedConfig {
  const resolution = resolveConfig(source)
  if (!resolution.ok) throw resolution.error
  return resolution.config
}

function resolveRateLimits(given: ValidatedConfig['rateLimit']): ResolvedRateLimits {
  const credentials = given === false ? false : given?.credentials
  if (credentials === false) return Object.freeze({ credentials: null })
  const window = credentials?.window ?? DEFAULT_CREDENTIALS_LIMITS.window
  // A store that cannot count refuses the attempt unless the application chose otherwise.
  const failOpen = credentials?.failOpen === true ? { failOpen: true } : {}
  return Object.freeze({
    credentials: Object.freeze({
      perIdentifier: { points: credentials?.perIdentifier ?? DEFAULT_CREDENTIALS_LIMITS.perIdentifier, window, ...failOpen },
      perAddress: { points: credentials?.perAddress ?? DEFAULT_CREDENTIALS_LIMITS.perAddress, window, ...failOpen },
    }),
  })
}

function resolveAvailability(given: ValidatedConfig['availability']): ResolvedAvailability {
  const custom = given?.isOutage as ((error: unknown) => boolean) | undefined
  return Object.freeze({
    adapterTimeout: given?.adapterTimeout ?? DEFAULT_AVAILABILITY.adapterTimeout,
    storeTimeout: given?.storeTimeout ?? DEFAULT_AVAILABILITY.storeTimeout,
    retryAfter: given?.retryAfter ?? DEFAULT_AVAILABILITY.retryAfter,
    isOutage: custom
      ? (error: unknown) => {
          if (isOutageError(error)) return true
          try {
            return custom(error) === true
          } catch {
            // The application's test failed: the failure is reported as it is, not as an outage.
            return false
          }
        }
      : isOutageError,
  })
}
