/**
 * What the fuzz suite generates: a plan per request. A plan names a route of the routing table,
 * the legitimate ingredients a real client would bring to it (a CSRF pair, a signed-in session, an
 * OAuth flow started and taken through the provider, the right credentials), and the tampering
 * applied on top. The driver (`drive.ts`) turns a plan into requests; whether the result may sign
 * anyone in follows from which ingredients survive the tampering intact.
 *
 * @module
 */
import fc from 'fast-check'

/** Ways to break the double-submit CSRF pair. Each one must leave the request unverified. */
export const CSRF_TAMPERS = [
  'drop-cookie',
  'drop-token',
  'flip-token',
  'flip-hash',
  'foreign-pair',
  'token-is-cookie',
  'token-in-query',
  'insecure-name',
  'non-string-token',
  'uppercase-token',
] as const

/** Ways to break a session cookie. Each one must leave the request signed out. */
export const SESSION_TAMPERS = [
  'flip',
  'truncate',
  'foreign-secret',
  'expired',
  'insecure-name',
  'drop-chunk',
  'chunk-flood',
] as const

/** Ways to break the sealed OAuth flow (the envelope in the `state` cookie). None may resume. */
export const ENVELOPE_TAMPERS = ['flip', 'truncate', 'replay', 'other-provider', 'rename', 'insecure-name', 'drop'] as const

/** Ways to break the provider's answer (the callback's parameters). None may sign in. */
export const ANSWER_TAMPERS = [
  'flip-state',
  'drop-state',
  'flip-code',
  'drop-code',
  'flip-iss',
  'drop-iss',
  'provider-error',
  'other-visit',
] as const

/** Ways to get the credentials wrong. None may sign in. */
export const CREDENTIAL_TAMPERS = ['wrong-password', 'case', 'drop-field', 'array', 'pad'] as const

/**
 * Callback URLs a browser would take off our origin (or that are not http at all), and their
 * encoded and split variants. The default `redirect` callback must keep every one of them home.
 */
export const HOSTILE_URLS = [
  '//evil.example',
  '///evil.example',
  '/\\evil.example',
  '\\/evil.example',
  '\\\\evil.example',
  '/%5Cevil.example',
  '/%5C%5Cevil.example',
  '%2F%2Fevil.example',
  '/%2F/evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  '\t//evil.example',
  ' //evil.example',
  '\u0000//evil.example',
  'https:evil.example',
  'https:/evil.example',
  'https:\\\\evil.example',
  'http://evil.example/',
  'HTTPS://EVIL.EXAMPLE/',
  'https://evil.example/',
  'https://authchart.test@evil.example/',
  'https://authchart.test.evil.example/',
  'https://evil.example\\@authchart.test/',
  'https://evil.example#@authchart.test/',
  'https://authchart.test:444/',
  'http://authchart.test/',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'java\tscript:alert(1)',
  'data:text/html,<fuzz-xss>',
  'vbscript:x',
  '/dashboard/日本',
  '/<fuzz-xss>',
  '/"><fuzz-xss>',
  '/x?next=//evil.example',
  '/\u2028x',
  '',
  ' ',
  '/',
]

/** Short hostile strings for values that are not URLs. */
export const TRICKY = [
  '',
  ' ',
  '..',
  '%00',
  '\u0000',
  'undefined',
  'null',
  '__proto__',
  'constructor',
  '<fuzz-xss>',
  '"><fuzz-xss>',
  "'><fuzz-xss>",
  '\r\n[auth][error] forged line',
  '\n[auth][info] admin signed in',
  '\u001b[2J',
  '\u2028',
  '\u202e\uffff',
  '😀',
  'a'.repeat(3000),
  '{"a":1}',
  'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIn0..AAAA.BBBB.CCCC',
]

const text = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_URLS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
)

/** Request noise that changes nothing a legitimate sign-in depends on. */
export type Noise =
  | { kind: 'callbackUrl'; value: string }
  | { kind: 'query'; key: string; value: string }
  | { kind: 'cookie'; name: string; value: string }
  | { kind: 'header'; name: string; value: string }
  | { kind: 'json-body' }
  | { kind: 'sniffed-json' }
  | { kind: 'trailing-slash' }
  | { kind: 'method-switch' }
  | { kind: 'json-redirect' }
  | { kind: 'field'; key: string; value: string }

/** One alteration of a request. */
export type Tamper =
  | { kind: 'csrf'; how: (typeof CSRF_TAMPERS)[number]; n: number }
  | { kind: 'session'; how: (typeof SESSION_TAMPERS)[number]; n: number }
  | { kind: 'envelope'; how: (typeof ENVELOPE_TAMPERS)[number]; n: number }
  | { kind: 'answer'; how: (typeof ANSWER_TAMPERS)[number]; n: number }
  | { kind: 'credentials'; how: (typeof CREDENTIAL_TAMPERS)[number]; n: number }
  | { kind: 'noise'; noise: Noise }

/** One generated request. */
export interface Plan {
  /** Index into the routing table (modulo its length). */
  route: number
  /** Index among the configured providers of the route's type. */
  provider: number
  /** Bring a valid CSRF pair (cookie and body token). */
  csrf: boolean
  /** Be signed in first: with the credentials, or through the OpenID Provider. */
  session: 'none' | 'credentials' | 'oauth'
  /** On a route that resumes a flow: start it, and take it through the provider. */
  flow: 'none' | 'started' | 'visited'
  /** Fill in the right credentials (on a credentials provider). */
  proof: boolean
  tampers: Tamper[]
}

const n = fc.nat({ max: 1_000_000 })

const noiseArb: fc.Arbitrary<Noise> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_URLS).map((value) => ({ kind: 'callbackUrl' as const, value })) },
  {
    weight: 2,
    arbitrary: fc
      .record({ key: fc.constantFrom('x', 'error', 'email', 'prompt', 'login_hint', 'redirect_uri', 'scope', 'response_type', 'nonce', '__proto__'), value: text })
      .map((q) => ({ kind: 'query' as const, ...q })),
  },
  {
    // Protocol parameters a sign-in request must never get to choose for the authorization URL.
    weight: 2,
    arbitrary: fc
      .record({
        key: fc.constantFrom('redirect_uri', 'response_type', 'client_id', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'request_uri'),
        value: fc.constantFrom('https://evil.example/cb', 'token', 'plain', 'attacker', 'x'),
      })
      .map((q) => ({ kind: 'query' as const, ...q })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        name: fc.constantFrom('other', '__Secure-authjs.session-tokenx', 'authjs.session-token-old', '__Host-authjs.csrf-tokenx', 'next-auth.session-token', '__proto__'),
        value: text,
      })
      .map((c) => ({ kind: 'cookie' as const, ...c })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        name: fc.constantFrom('origin', 'referer', 'user-agent', 'accept', 'x-forwarded-host', 'x-forwarded-proto', 'sec-fetch-site'),
        value: fc.constantFrom('https://evil.example', 'null', 'cross-site', 'evil.example', 'javascript', 'x'.repeat(2000)),
      })
      .map((h) => ({ kind: 'header' as const, ...h })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'json-body' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'sniffed-json' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'trailing-slash' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'method-switch' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'json-redirect' as const }) },
  {
    weight: 2,
    arbitrary: fc
      .record({ key: fc.constantFrom('data', 'email', 'username', 'x', 'constructor', 'redirect', 'token'), value: text })
      .map((f) => ({ kind: 'field' as const, ...f })),
  },
)

const tamperArb: fc.Arbitrary<Tamper> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('csrf' as const), how: fc.constantFrom(...CSRF_TAMPERS), n }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('session' as const), how: fc.constantFrom(...SESSION_TAMPERS), n }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('envelope' as const), how: fc.constantFrom(...ENVELOPE_TAMPERS), n }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('answer' as const), how: fc.constantFrom(...ANSWER_TAMPERS), n }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('credentials' as const), how: fc.constantFrom(...CREDENTIAL_TAMPERS), n }) },
  { weight: 6, arbitrary: noiseArb.map((noise) => ({ kind: 'noise' as const, noise })) },
)

/**
 * Plans over a table of `routeCount` routes; half of them aim at a flow chosen uniformly (then one
 * of the routes it serves), so every flow is reached often whatever the seed, and a flow served by
 * one route is aimed at as often as one served by six.
 */
export function planArb(routeCount: number, routesByFlow: readonly (readonly number[])[]): fc.Arbitrary<Plan> {
  const anyRoute = fc.nat({ max: routeCount - 1 })
  const groups = routesByFlow.filter((routes) => routes.length > 0)
  return fc.record({
    route: groups.length > 0 ? fc.oneof(anyRoute, fc.constantFrom(...groups).chain((routes) => fc.constantFrom(...routes))) : anyRoute,
    provider: fc.nat({ max: 7 }),
    csrf: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    session: fc.oneof(
      { weight: 5, arbitrary: fc.constant('none' as const) },
      { weight: 4, arbitrary: fc.constant('credentials' as const) },
      { weight: 1, arbitrary: fc.constant('oauth' as const) },
    ),
    flow: fc.oneof(
      { weight: 1, arbitrary: fc.constant('none' as const) },
      { weight: 4, arbitrary: fc.constant('started' as const) },
      { weight: 3, arbitrary: fc.constant('visited' as const) },
    ),
    proof: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    tampers: fc.oneof(
      { weight: 3, arbitrary: fc.constant<Tamper[]>([]) },
      { weight: 4, arbitrary: fc.array(tamperArb, { minLength: 1, maxLength: 1 }) },
      { weight: 3, arbitrary: fc.array(tamperArb, { minLength: 2, maxLength: 3 }) },
    ),
  })
}

/** The seed of this run: `FUZZ_SEED` when set (to replay a failure), random otherwise. */
export function fuzzSeed(): number {
  const given = process.env.FUZZ_SEED
  if (given !== undefined && given !== '') {
    const seed = Number(given)
    if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(given)}`)
    return seed
  }
  return Math.floor(Math.random() * 2 ** 31)
}
