/**
 * Session tokens: encrypted JWTs (JWE, `dir` + `A256CBC-HS512`) in the format of Auth.js, so a
 * cookie written by `@auth/core` opens here and the reverse.
 *
 * The key is HKDF-SHA-256 of the secret with the cookie name as salt, so a token minted for one
 * cookie name cannot be replayed under another. Secrets may be rotated: encode uses the first,
 * decode tries each (matched by the `kid` thumbprint).
 *
 * @module
 */
import * as base64url from 'jose/base64url'
import { calculateJwkThumbprint } from 'jose/jwk/thumbprint'
import { parseCookieHeader, readChunkedCookie, defaultCookies } from './cookies.js'
import { DerivationCache, hkdfSha256 } from './crypto.js'
import { MissingSecret } from './errors.js'
import { encryptCbcHs512, fastJwe, parseCbcHs512 } from './fast/jwe-cbc.js'
import type { DefaultJWT, JWT, JWTDecodeParams, JWTEncodeParams, JWTOptions } from './shapes.js'

export type { DefaultJWT, JWT, JWTDecodeParams, JWTEncodeParams, JWTOptions }

/** The default token lifetime: 30 days, in seconds. */
export const DEFAULT_MAX_AGE = 30 * 24 * 60 * 60


type ContentEncryption = 'A256CBC-HS512' | 'A256GCM'

interface DerivedKey {
  key: Uint8Array
  kid: string
}

const ALG = 'dir'
const ENC: ContentEncryption = 'A256CBC-HS512'
const derivedKeys = new DerivationCache<DerivedKey>()
/** The key derived most recently, with what it was derived from. */
let lastDerived: { enc: string; secret: string; salt: string; derived: DerivedKey } | undefined

/**
 * Derives the encryption key and its RFC 7638 thumbprint, memoised per (enc, secret, salt):
 * HKDF and the thumbprint cost more than the decryption they enable.
 */
function deriveKey(enc: string, secret: string, salt: string): Promise<DerivedKey> | DerivedKey {
  // Nearly every call asks for the session cookie's key again: skip building the cache key.
  const last = lastDerived
  // Stryker disable next-line ConditionalExpression: eq#jwt-1
  if (last !== undefined && last.secret === secret && last.salt === salt && last.enc === enc) return last.derived
  // Stryker disable next-line ConditionalExpression: eq#jwt-2
  const length = enc === 'A256CBC-HS512' ? 64 : enc === 'A256GCM' ? 32 : 0
  // Stryker disable next-line ConditionalExpression,StringLiteral: eq#jwt-3
  if (length === 0) return Promise.reject(new Error('Unsupported JWT Content Encryption Algorithm'))
  const cacheKey = `${enc}\u0000${salt}\u0000${secret}`
  const known = derivedKeys.peek(cacheKey)
  // Stryker disable next-line ConditionalExpression,BlockStatement: eq#jwt-4
  if (known !== undefined) {
    // Stryker disable next-line ObjectLiteral: eq#jwt-5
    lastDerived = { enc, secret, salt, derived: known }
    return known
  }
  return derivedKeys.get(cacheKey, async () => {
    const key = await hkdfSha256(secret, salt, `Auth.js Generated Encryption Key (${salt})`, length)
    const kid = await calculateJwkThumbprint(
      { kty: 'oct', k: base64url.encode(key) },
      length === 64 ? 'sha512' : 'sha256',
    )
    return { key, kid }
  })
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

/**
 * Encrypts `token` as a JWE with `iat`, `exp` and a random `jti` added.
 *
 * @see RFC 7516 (JWE), RFC 7518 §5.2.5 (A256CBC-HS512), RFC 5869 (HKDF)
 */
export async function encode<Payload = JWT>(params: JWTEncodeParams<Payload>): Promise<string> {
  const { token = {}, secret, maxAge = DEFAULT_MAX_AGE, salt } = params
  const first = Array.isArray(secret) ? secret[0] : secret
  if (!first) throw new MissingSecret('Must pass `secret` to encode a JWT')
  const derived = deriveKey(ENC, first, salt)
  const { key, kid } = derived instanceof Promise ? await derived : derived
  // Stryker disable next-line ConditionalExpression,BlockStatement: eq#engine-envelope-3
  if (fastJwe) {
    // The same claims, in the same order, as jose's EncryptJWT below writes them.
    const iat = nowSeconds()
    const claims = { ...(token as Record<string, unknown>), iat, exp: iat + maxAge, jti: crypto.randomUUID() }
    return encryptCbcHs512(JSON.stringify(claims), key, kid)
  }
  const { EncryptJWT } = await import('jose/jwt/encrypt')
  return new EncryptJWT(token as Record<string, unknown>)
    .setProtectedHeader({ alg: ALG, enc: ENC, kid })
    .setIssuedAt()
    .setExpirationTime(nowSeconds() + maxAge)
    .setJti(crypto.randomUUID())
    .encrypt(key)
}

/**
 * Decrypts and validates a token (15 s clock tolerance). Returns `null` for an empty token.
 *
 * @throws when the token is malformed, tampered with, expired, or sealed with an unknown secret.
 */
export async function decode<Payload = JWT>(params: JWTDecodeParams): Promise<Payload | null> {
  return decodeNow<Payload>(params)
}

/**
 * {@link decode}, synchronously when it can be: the fast path with keys already derived (every
 * session read after the first). Otherwise a promise, as `decode` returns. A synchronous failure
 * throws, an asynchronous one rejects.
 *
 * @throws as {@link decode}.
 */
export function decodeNow<Payload = JWT>(params: JWTDecodeParams): Payload | null | Promise<Payload | null> {
  const { token, secret, salt } = params
  if (!token) return null
  const secrets = Array.isArray(secret) ? secret : [secret]
  const fast = parseCbcHs512(token)
  if (!fast.handled) return decodeWithJose<Payload>(token, secrets, salt)
  for (const candidate of secrets) {
    const pending = deriveKey(ENC, candidate, salt)
    // A key still being derived: the search starts again, asynchronously (derived keys are cached).
    // Stryker disable next-line ConditionalExpression: eq#jwt-6
    if (pending instanceof Promise) return decodeFastAsync<Payload>(fast, secrets, salt)
    if (fast.kid === undefined || fast.kid === pending.kid) {
      return validatedClaims(fast.decrypt(pending.key), nowSeconds()) as Payload
    }
  }
  throw new Error('no matching decryption secret')
}

/**
 * Whether `token` was sealed under `secret` (its `kid` is that secret's key id for `salt`), without
 * decrypting it. For rotation: what an older secret of the list sealed is sealed again under the
 * first. A token without a `kid`, or one that is not a JWE, counts as not sealed under it.
 */
export function isSealedWith(token: string, secret: string, salt: string): boolean | Promise<boolean> {
  const header = token.slice(0, token.indexOf('.'))
  let kid: unknown
  try {
    kid = (JSON.parse(new TextDecoder().decode(base64url.decode(header))) as { kid?: unknown }).kid
  } catch {
    return false
  }
  if (typeof kid !== 'string') return false
  const derived = deriveKey(ENC, secret, salt)
  return derived instanceof Promise ? derived.then((key) => key.kid === kid) : derived.kid === kid
}

async function decodeFastAsync<Payload>(
  fast: Extract<ReturnType<typeof parseCbcHs512>, { handled: true }>,
  secrets: readonly string[],
  salt: string,
): Promise<Payload> {
  for (const candidate of secrets) {
    const pending = deriveKey(ENC, candidate, salt)
    const derived = pending instanceof Promise ? await pending : pending
    if (fast.kid === undefined || fast.kid === derived.kid) {
      return validatedClaims(fast.decrypt(derived.key), nowSeconds()) as Payload
    }
  }
  throw new Error('no matching decryption secret')
}

async function decodeWithJose<Payload>(token: string, secrets: readonly string[], salt: string): Promise<Payload> {
  const { jwtDecrypt } = await import('jose/jwt/decrypt')
  const { payload } = await jwtDecrypt(
    token,
    async ({ kid, enc }) => {
      for (const candidate of secrets) {
        const derived = await deriveKey(enc, candidate, salt)
        if (kid === undefined || kid === derived.kid) return derived.key
      }
      throw new Error('no matching decryption secret')
    },
    {
      clockTolerance: CLOCK_TOLERANCE,
      keyManagementAlgorithms: [ALG],
      contentEncryptionAlgorithms: [ENC, 'A256GCM'],
    },
  )
  return payload as Payload
}

/** The claims that must be numbers when present, in the order jose checks them. */
const TIME_CLAIMS = ['iat', 'nbf', 'exp'] as const

/** Seconds of clock skew allowed on `exp` and `nbf`, as Auth.js allows. */
const CLOCK_TOLERANCE = 15

/**
 * Parses and checks a decrypted claims set the way jose's `jwtDecrypt` does for `decode`'s
 * options: a JSON object; `iat`, `nbf`, `exp` numbers when present; not before `nbf`, not after
 * `exp`, each with 15 s of tolerance.
 *
 * @throws {TypeError} when a check fails.
 */
function validatedClaims(plaintext: string, now: number): Record<string, unknown> {
  let claims: unknown
  // Stryker disable BlockStatement: eq#jwt-7
  try {
    claims = JSON.parse(plaintext)
  } catch {
    throw new TypeError('JWT Claims Set must be a top-level JSON object')
  }
  // Stryker restore BlockStatement
  if (!claims || typeof claims !== 'object' || Array.isArray(claims)) {
    throw new TypeError('JWT Claims Set must be a top-level JSON object')
  }
  const set = claims as Record<string, unknown>
  for (const claim of TIME_CLAIMS) {
    if (set[claim] !== undefined && typeof set[claim] !== 'number') throw new TypeError(`"${claim}" claim must be a number`)
  }
  // Stryker disable next-line ConditionalExpression: eq#jwt-8
  if (set.nbf !== undefined && (set.nbf as number) > now + CLOCK_TOLERANCE) {
    throw new TypeError('"nbf" claim timestamp check failed')
  }
  // Stryker disable next-line ConditionalExpression: eq#jwt-9
  if (set.exp !== undefined && (set.exp as number) <= now - CLOCK_TOLERANCE) {
    throw new TypeError('"exp" claim timestamp check failed')
  }
  return set
}

/** Parameters of {@link getToken}. */
export interface GetTokenParams<R extends boolean = false> {
  req: Request | { headers: Headers | Record<string, string> }
  secret?: string | string[]
  salt?: string
  /** Read the `__Secure-` cookie; by default the plain one. */
  secureCookie?: boolean
  cookieName?: string
  /** Return the raw token string instead of its claims. */
  raw?: R
  decode?: JWTOptions['decode']
  logger?: { debug?: (message: string, metadata?: unknown) => void }
}

/**
 * Reads the session token of a request, from the (chunked) session cookie or an
 * `Authorization: Bearer` header, and decodes it. Invalid tokens give `null`.
 *
 * @throws {MissingSecret} when a token is present, `raw` is not set and no secret is given.
 */
export async function getToken<R extends boolean = false>(
  params: GetTokenParams<R>,
): Promise<R extends true ? string | null : JWT | null>
export async function getToken(params: GetTokenParams<boolean>): Promise<string | JWT | null> {
  const {
    req,
    secureCookie = false,
    cookieName = defaultCookies(secureCookie).sessionToken.name,
    salt = cookieName,
    secret,
    raw,
    decode: decodeToken = decode,
  } = params
  if (!req) throw new TypeError('Must pass `req` to getToken()')
  const headers = req.headers instanceof Headers ? req.headers : new Headers(req.headers)
  let token = readChunkedCookie(parseCookieHeader(headers.get('cookie')), cookieName).value
  const authorization = headers.get('authorization')
  if (!token && authorization?.split(' ')[0] === 'Bearer') {
    // Stryker disable BlockStatement: eq#jwt-10
    try {
      token = decodeURIComponent(authorization.split(' ')[1] ?? '')
    } catch {
      return null
    }
    // Stryker restore BlockStatement
  }
  if (!token) return null
  if (raw) return token
  if (!secret || secret.length === 0) {
    throw new MissingSecret('Must pass `secret` if not set to JWT getToken()')
  }
  try {
    return await decodeToken({ token, secret, salt })
  } catch {
    return null
  }
}
