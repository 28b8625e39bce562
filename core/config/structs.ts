/**
 * The configuration schema. `object()` rejects unknown keys, so a misspelt option fails at boot
 * instead of being silently ignored.
 *
 * @module
 */
import {
  array,
  boolean,
  define,
  defaulted,
  enums,
  func,
  integer,
  literal,
  min,
  object,
  optional,
  record,
  refine,
  size,
  string,
  type,
  union,
  unknown,
  type Infer,
  type Struct,
} from 'superstruct'
import { raw, skipCSRFCheck } from '../symbols.js'
import { observerStruct } from './observers.js'
import { compileOriginPattern } from './origins.js'
import { parseTrustedHost } from './trusted-hosts.js'

/** Secrets shorter than this are refused (spec §5.1, §8). */
export const MIN_SECRET_LENGTH = 32

/** Where a missing or short secret error sends the developer. */
export const SECRET_HINT = 'generate one with `npx authchart secret`'

/**
 * What a lone short secret's error says: the fix that keeps today's sessions. An app switching from
 * Auth.js (which accepts any length) keeps its old secret for reading, behind a new one.
 */
export const SHORT_SECRET_FIX =
  "to keep today's sessions, make a new one and keep the old one after it, for reading only: " +
  '`secret: [process.env.AUTH_SECRET_1, process.env.AUTH_SECRET]` with AUTH_SECRET_1 the new secret ' +
  `(${SECRET_HINT})`

const Secret = refine(
  string(),
  'Secret',
  (value) =>
    value.length >= MIN_SECRET_LENGTH ||
    `must be at least ${MIN_SECRET_LENGTH} characters long; ${SHORT_SECRET_FIX}`,
)

/**
 * A rotation list: the first secret encrypts and signs everything new, so it must be long; an
 * older one only opens what it sealed before (sessions, flow cookies), so it may be as short as
 * Auth.js allowed, and what it opens is sealed again under the first.
 */
const SecretList = refine(
  size(array(string()), 1, Infinity),
  'SecretList',
  (list) => {
    // An empty list is `size`'s to refuse (a missing secret).
    if (list.length === 0) return true
    if (list[0]!.length < MIN_SECRET_LENGTH) {
      return `the first secret encrypts, so it must be at least ${MIN_SECRET_LENGTH} characters long (${SECRET_HINT}); older secrets after it may be shorter`
    }
    const empty = list.findIndex((secret) => secret.length === 0)
    return empty === -1 || `secret ${empty} is empty`
  },
)

/** `trustHost`: `true`/`false`, or a non-empty list of hosts or origins (see `trusted-hosts.ts`). */
const TrustHost = refine(unknown(), 'TrustHost', (value) => {
  if (typeof value === 'boolean') return true
  if (!Array.isArray(value) || value.length === 0) return 'must be true, false or a list of hosts ("app.example.com") or origins'
  for (const [index, entry] of value.entries()) {
    const parsed = typeof entry === 'string' ? parseTrustedHost(entry) : 'must be a string'
    if (typeof parsed === 'string') return `entry ${index} ${parsed}`
  }
  return true
}) as unknown as Struct<boolean | string[], null>

/** The `secret` option: one long secret, or a rotation list newest first. */
const SecretOption = union([Secret, SecretList])

const BasePath = refine(
  string(),
  'BasePath',
  (value) =>
    (value.startsWith('/') && !/[?#\s]/.test(value)) ||
    'must be a path starting with "/" (for example "/auth")',
)

const PagePath = refine(
  string(),
  'PagePath',
  (value) =>
    /^(\/(?!\/)|https?:\/\/)/.test(value) || 'must be a path ("/login") or an http(s) URL',
)

// Theme values are written into CSS and HTML attributes; restricting their alphabet keeps a
// config value from closing the <style> element (defence in depth: it is escaped as well).
const CssColor = refine(
  string(),
  'CssColor',
  (value) => /^[#a-zA-Z0-9(),.%\s-]*$/.test(value) || 'must be a CSS colour such as "#346df1"',
)

const ProxyOrigin = refine(string(), 'ProxyOrigin', (value) => {
  const compiled = compileOriginPattern(value)
  return typeof compiled === 'string' ? compiled : true
})

const SecondsStruct = min(integer(), 0)

const Marker = <S extends symbol>(name: string, marker: S) =>
  define<S>(name, (value) => value === marker || `must be the exported \`${name}\` marker`)

/** A cookie override: a name and/or serialisation options. */
const CookieOverride = object({
  name: optional(refine(string(), 'CookieName', (v) => /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(v) || 'must be a valid cookie name')),
  options: optional(record(string(), unknown())),
})

/** A provider as given: an object with at least a `type`, or a function returning one. */
export const ProviderInput = union([
  func(),
  type({
    // A built-in type, or one a registered flow serves (checked when the config is resolved).
    type: string(),
  }),
])

/** The schema of `AuthConfig` (spec §2.13) with the defaults of spec §2.13 and §2.15. */
/** The options of `stepUp()` (checked when the configuration is loaded). */
export const StepUpOptionsStruct = object({
  maxAge: optional(min(integer(), 0)),
  factors: optional(array(enums(['pwd', 'otp', 'hwk', 'email', 'fed']))),
  aal: optional(union([literal(1), literal(2)])),
  actions: optional(
    record(
      enums(['add-passkey', 'enrol-second-factor', 'remove-second-factor', 'revoke-sessions', 'link-account', 'change-password', 'manage-api-keys', 'approve-device', 'manage-organization']),
      union([
        literal(false),
        object({
          maxAge: optional(min(integer(), 0)),
          factors: optional(array(enums(['pwd', 'otp', 'hwk', 'email', 'fed']))),
          aal: optional(union([literal(1), literal(2)])),
        }),
      ]),
    ),
  ),
})

/** The options of `totp()`. */
export const TotpOptionsStruct = object({ issuer: optional(size(string(), 1, 256)) })

export const AuthConfigStruct = object({
  providers: defaulted(array(ProviderInput), []),
  secret: optional(SecretOption),
  adapter: optional(type({})),
  basePath: defaulted(BasePath, '/auth'),
  callbacks: optional(
    type({
      signIn: optional(func()),
      redirect: optional(func()),
      session: optional(func()),
      jwt: optional(func()),
    }),
  ),
  cookies: optional(
    object({
      sessionToken: optional(CookieOverride),
      callbackUrl: optional(CookieOverride),
      csrfToken: optional(CookieOverride),
      pkceCodeVerifier: optional(CookieOverride),
      state: optional(CookieOverride),
      nonce: optional(CookieOverride),
      webauthnChallenge: optional(CookieOverride),
      flowState: optional(CookieOverride),
    }),
  ),
  debug: defaulted(boolean(), false),
  events: optional(
    type({
      signIn: optional(func()),
      signOut: optional(func()),
      createUser: optional(func()),
      updateUser: optional(func()),
      linkAccount: optional(func()),
      session: optional(func()),
    }),
  ),
  experimental: defaulted(object({ enableWebAuthn: defaulted(boolean(), false) }), {}),
  jwt: optional(
    object({
      secret: optional(SecretOption),
      maxAge: optional(SecondsStruct),
      encode: optional(func()),
      decode: optional(func()),
    }),
  ),
  logger: optional(type({ error: optional(func()), warn: optional(func()), debug: optional(func()) })),
  pages: defaulted(
    object({
      signIn: optional(PagePath),
      signOut: optional(PagePath),
      error: optional(PagePath),
      verifyRequest: optional(PagePath),
      newUser: optional(PagePath),
    }),
    {},
  ),
  redirectProxyUrl: optional(string()),
  redirectProxyOrigins: optional(array(ProxyOrigin)),
  session: defaulted(
    object({
      strategy: optional(enums(['jwt', 'database'])),
      maxAge: defaulted(SecondsStruct, 2_592_000),
      updateAge: defaulted(SecondsStruct, 86_400),
      absoluteMaxAge: optional(min(integer(), 1)),
      cache: optional(object({ maxAge: min(integer(), 1) })),
      generateSessionToken: optional(func()),
    }),
    {},
  ),
  skipCSRFCheck: optional(Marker('skipCSRFCheck', skipCSRFCheck)),
  raw: optional(Marker('raw', raw)),
  theme: defaulted(
    object({
      colorScheme: defaulted(enums(['auto', 'dark', 'light']), 'auto'),
      logo: defaulted(string(), ''),
      brandColor: defaulted(CssColor, ''),
      buttonText: defaulted(CssColor, ''),
    }),
    {},
  ),
  trustHost: optional(TrustHost),
  useSecureCookies: optional(boolean()),
  store: optional(
    type({ claim: func(), increment: func(), consume: func(), put: func(), get: func(), reset: func() }),
  ),
  // Feature modules: their shape is checked (and a plain object refused with the line to write)
  // before this struct runs, their options against their own structs.
  stepUp: optional(unknown()),
  secondFactor: optional(unknown()),
  organizations: optional(unknown()),
  apiKeys: optional(unknown()),
  serviceAccounts: optional(unknown()),
  deviceAuthorization: optional(unknown()),
  rateLimit: optional(
    union([
      literal(false),
      object({
        credentials: optional(
          union([
            literal(false),
            object({
              perIdentifier: optional(min(integer(), 1)),
              perAddress: optional(min(integer(), 1)),
              window: optional(min(integer(), 1)),
              failOpen: optional(boolean()),
            }),
          ]),
        ),
      }),
    ]),
  ),
  availability: optional(
    object({
      adapterTimeout: optional(min(integer(), 1)),
      storeTimeout: optional(min(integer(), 1)),
      retryAfter: optional(min(integer(), 1)),
      isOutage: optional(func()),
    }),
  ),
  extensions: optional(array(type({ id: string(), version: string(), at: string(), initial: string() }))),
  flows: optional(array(type({ id: string(), flow: type({}), runs: func() }))),
  inspect: optional(func()),
  // Values of `authchart/inspector`, `authchart/audit` and `authchart/telemetry`; their options
  // are checked by their own modules, and only when configured.
  inspector: optional(observerStruct('inspector')),
  audit: optional(observerStruct('audit')),
  telemetry: optional(observerStruct('telemetry')),
})

/** The configuration after defaults were applied. */
export type ValidatedConfig = Infer<typeof AuthConfigStruct>
