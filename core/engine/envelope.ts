/**
 * Sealed envelopes: a flow at rest travels to the browser as `{ id, v, value, context }` inside a
 * JWE (`dir`, A256GCM) and comes back untrusted. Opening checks, in order: it decrypts with one of
 * our secrets (tampering), it was sealed for this flow (confused deputy), for this binding (e.g. the
 * provider), is not expired, was sealed by this version of the machine (or one the flow declares a
 * migration from), names a state that waits for a request, and its context has the flow's shape.
 *
 * @module
 */
import * as base64url from 'jose/base64url'
import * as joseErrors from 'jose/errors'
import { calculateJwkThumbprint } from 'jose/jwk/thumbprint'
import type { JWTPayload } from 'jose'
import { StructError, create, object, optional, string, unknown as anyValue } from 'superstruct'
import type { AnyMachineSnapshot, AnyStateMachine, StateValue } from 'xstate'
import { stateLabel } from './transitions.js'
import { DerivationCache, hkdfSha256 } from '../crypto.js'
import { encryptGcm, fastGcm, parseGcm } from '../fast/jwe-gcm.js'
import { FlowStateError } from '../errors.js'
import { chartSnapshot, chartState } from './chart.js'
import type { FlowDefinition, SealedFlowState } from './flow.js'

/** Lifetime of a sealed flow: 15 minutes, as Auth.js's check cookies. */
export const ENVELOPE_MAX_AGE = 15 * 60

/**
 * What is sealed: the machine id and version, its state value and its context, or, for a context
 * too large for a cookie, the id under which it is kept on the server (`parked`, context `null`).
 */
export interface Envelope {
  id: string
  v: string
  value: StateValue
  context: unknown
  parked?: string
}

const EnvelopeStruct = object({
  id: string(),
  v: string(),
  value: anyValue(),
  context: anyValue(),
  parked: optional(string()),
})

/**
 * Where a flow's context waits while it rests when its envelope would not fit in a cookie (an OIDC
 * sign-in's tokens and profile at the second-factor step, an application step's own fields):
 * the configured store, under a random id the envelope carries, encrypted like the envelope and
 * for its lifetime. Browsers drop a cookie over 4,096 bytes without a word.
 */
export interface ContextPark {
  /** Most characters the sealed envelope may have to fit in its cookie (name and attributes aside). */
  room: number
  put(key: string, value: string, ttlSeconds: number): Promise<void>
  get(key: string): Promise<string | null>
  forget(key: string): Promise<void>
}

const parkedKey = (id: string) => `flow:context:${id}`
// Stryker disable next-line ArrowFunction,StringLiteral: eq#engine-envelope-park-salt
const parkedSalt = (cookieName: string) => `${cookieName}#context`

/** Keys and binding for sealing. */
export interface SealOptions {
  /** Secrets, newest first; the first seals, any opens. */
  secrets: readonly string[]
  /** The cookie that carries the envelope; part of the key derivation, like Auth.js's salts. */
  cookieName: string
  /** Epoch seconds: the current time, from the request event. */
  at: number
  /** Optional binding (e.g. a provider id); an envelope opens only under the same binding. */
  binding?: string
  /** Where a context too large for the cookie is kept; without it every context is sealed in. */
  park?: ContextPark
}

interface SealingKey {
  key: Uint8Array
  kid: string
}

const sealingKeys = new DerivationCache<SealingKey>()

/** A 256-bit key per (secret, salt), with its thumbprint to pick it among rotated secrets. */
function keyFor(secret: string, salt: string): Promise<SealingKey> {
  return sealingKeys.get(`${salt}\u0000${secret}`, async () => {
    const key = await hkdfSha256(secret, salt, `authchart flow envelope (${salt})`, 32)
    const kid = await calculateJwkThumbprint({ kty: 'oct', k: base64url.encode(key) }, 'sha256')
    return { key, kid }
  })
}

/**
 * Decrypts claims sealed by {@link sealEnvelope} or {@link sealValue} under `salt` (trying every
 * secret) and checks their age against `at`.
 *
 * @throws jose's errors: `JWTExpired` when too old, others when forged or foreign.
 */
async function openClaims(sealed: string, secrets: readonly string[], salt: string, at: number) {
  const fast = parseGcm(sealed)
  // Stryker disable next-line ConditionalExpression,BlockStatement: eq#engine-envelope-1
  if (fast) {
    for (const secret of secrets) {
      const candidate = await keyFor(secret, salt)
      if (candidate.kid === fast.kid) return checkedClaims(fast.decrypt(candidate.key), at)
    }
    throw new Error('sealed with an unknown secret')
  }
  const { jwtDecrypt } = await import('jose/jwt/decrypt')
  const { payload } = await jwtDecrypt(
    sealed,
    async ({ kid }) => {
      for (const secret of secrets) {
        const candidate = await keyFor(secret, salt)
        if (candidate.kid === kid) return candidate.key
      }
      throw new Error('sealed with an unknown secret')
    },
    {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
      currentDate: new Date(at * 1000),
      maxTokenAge: ENVELOPE_MAX_AGE,
      requiredClaims: ['exp', 'iat'],
    },
  )
  return payload
}

/**
 * The claim checks of the jose path below, for the fast path: a JSON object with numeric `iat`
 * and `exp`, issued no later than now and no longer ago than {@link ENVELOPE_MAX_AGE}, not expired.
 *
 * @throws jose's `JWTExpired` when too old, `JWTClaimValidationFailed` or `JWTInvalid` otherwise.
 */
function checkedClaims(plaintext: string, at: number): JWTPayload {
  let payload: unknown
  // Stryker disable BlockStatement: eq#engine-envelope-2
  try {
    payload = JSON.parse(plaintext)
  } catch {
    throw new joseErrors.JWTInvalid('JWT Claims Set must be a top-level JSON object')
  }
  // Stryker restore BlockStatement
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new joseErrors.JWTInvalid('JWT Claims Set must be a top-level JSON object')
  }
  const claims = payload as JWTPayload
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') {
    throw new joseErrors.JWTClaimValidationFailed('missing or invalid "iat" or "exp" claim', claims)
  }
  if (claims.exp <= at) throw new joseErrors.JWTExpired('"exp" claim timestamp check failed', claims)
  if (at - claims.iat > ENVELOPE_MAX_AGE) {
    throw new joseErrors.JWTExpired('"iat" claim timestamp check failed (too far in the past)', claims)
  }
  if (claims.iat > at) {
    throw new joseErrors.JWTClaimValidationFailed('"iat" claim timestamp check failed (it should be in the past)', claims)
  }
  return claims
}

/** Seals a small value (e.g. the origin a redirect-proxied callback returns to) for 15 minutes. */
export async function sealValue(
  value: Record<string, unknown>,
  options: { secrets: readonly string[]; salt: string; at: number },
): Promise<string> {
  const { key, kid } = await keyFor(options.secrets[0]!, options.salt)
  // Stryker disable next-line ConditionalExpression,BlockStatement: eq#engine-envelope-3
  if (fastGcm) {
    const claims = { value, iat: options.at, exp: options.at + ENVELOPE_MAX_AGE }
    return encryptGcm(JSON.stringify(claims), key, kid)
  }
  const { EncryptJWT } = await import('jose/jwt/encrypt')
  return new EncryptJWT({ value })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid })
    .setIssuedAt(options.at)
    .setExpirationTime(options.at + ENVELOPE_MAX_AGE)
    .encrypt(key)
}

/** Opens a value sealed by {@link sealValue}; `null` when forged, foreign or expired. */
export async function openValue(
  sealed: string,
  options: { secrets: readonly string[]; salt: string; at: number },
): Promise<Record<string, unknown> | null> {
  try {
    const payload = await openClaims(sealed, options.secrets, options.salt, options.at)
    const value = payload.value
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null
  } catch {
    return null
  }
}

/** Seals a resting snapshot of `flow`; a context too large for the cookie is parked on the server. */
export async function sealEnvelope(
  flow: FlowDefinition<AnyStateMachine, never>,
  snapshot: AnyMachineSnapshot,
  options: SealOptions,
): Promise<string> {
  const env: Envelope = {
    id: flow.chart.id,
    v: flow.chart.version,
    value: snapshot.value,
    context: flow.sealed ? flow.sealed(snapshot.context) : snapshot.context,
  }
  const sealed = await sealClaims(env, flow.chart.id, options)
  const { park } = options
  if (!park || sealed.length <= park.room) return sealed
  const parked = crypto.randomUUID()
  const value = await sealValue(
    { parked, flow: flow.chart.id, context: env.context as Record<string, unknown> },
    { secrets: options.secrets, salt: parkedSalt(options.cookieName), at: options.at },
  )
  await park.put(parkedKey(parked), value, ENVELOPE_MAX_AGE)
  return sealClaims({ ...env, context: null, parked }, flow.chart.id, options)
}

async function sealClaims(env: Envelope, audience: string, options: SealOptions): Promise<string> {
  const { key, kid } = await keyFor(options.secrets[0]!, options.cookieName)
  // Stryker disable next-line ConditionalExpression,BlockStatement: eq#engine-envelope-3
  if (fastGcm) {
    // The claims jose would write, in its order.
    const claims = {
      env,
      jti: crypto.randomUUID(),
      aud: audience,
      iat: options.at,
      exp: options.at + ENVELOPE_MAX_AGE,
      // Stryker disable next-line ConditionalExpression: eq#engine-envelope-5
      ...(options.binding !== undefined ? { sub: options.binding } : {}),
    }
    return encryptGcm(JSON.stringify(claims), key, kid)
  }
  const { EncryptJWT } = await import('jose/jwt/encrypt')
  const jwt = new EncryptJWT({ env })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid })
    .setJti(crypto.randomUUID())
    .setAudience(audience)
    .setIssuedAt(options.at)
    .setExpirationTime(options.at + ENVELOPE_MAX_AGE)
  if (options.binding !== undefined) jwt.setSubject(options.binding)
  return jwt.encrypt(key)
}

/**
 * The context a parked envelope names, read back from the server.
 *
 * @throws {FlowStateError} `ERR_FLOW_STATE_STALE` when the server no longer keeps it (expired, or
 *   a store that forgot it), `ERR_FLOW_STATE_INVALID` when what is kept is not this flow's.
 */
async function unparkContext(machineId: string, parked: string, options: OpenOptions): Promise<unknown> {
  const kept = options.park ? await options.park.get(parkedKey(parked)) : null
  if (kept === null) throw refuse('ERR_FLOW_STATE_STALE', `${machineId}: the sealed flow's context is no longer kept`)
  const value = await openValue(kept, { secrets: options.secrets, salt: parkedSalt(options.cookieName), at: options.at })
  if (
    !value ||
    value.parked !== parked ||
    // Stryker disable next-line ConditionalExpression: eq#engine-envelope-park-flow
    value.flow !== machineId
  ) {
    throw refuse('ERR_FLOW_STATE_INVALID', `${machineId}: the kept context belongs to another flow`)
  }
  return value.context
}

/** Envelope ids already resumed in this process, until they would have expired anyway. */
const consumed = new Map<string, number>()
const MAX_CONSUMED = 100_000

/**
 * Makes room for one more id in `ids` (id → expiry in epoch seconds, oldest first) once it holds
 * `max`: drops the ids whose envelopes have expired by the wall clock, then, if it is still full
 * of live ids, the oldest one rather than grow without bound. Live ids are kept as long as room
 * allows: dropping one early would let its envelope be replayed.
 *
 * @internal exported for its tests (a full map of the real size takes 100 000 sealed envelopes).
 */
export function makeRoom(ids: Map<string, number>, max: number): void {
  if (ids.size < max) return
  const now = Date.now() / 1000
  for (const [id, until] of ids) if (until < now) ids.delete(id)
  if (ids.size >= max) ids.delete(ids.keys().next().value as string)
}

function consumeOnce(jti: string, expires: number): boolean {
  if (consumed.has(jti)) return false
  makeRoom(consumed, MAX_CONSUMED)
  consumed.set(jti, expires)
  return true
}

/** How an envelope is opened: its keys and binding, and how its one use is spent. */
export interface OpenOptions extends SealOptions {
  /**
   * Spends the envelope's id, atomically: `true` for the first opening only. The engine passes
   * the configured store's `claim`, so the envelope is single-use across every instance sharing
   * it; without one, it is single-use within this process.
   */
  claim?: (jti: string, ttlSeconds: number) => Promise<boolean>
  /** Reads the envelope without spending it (to render the page of the state it rests in). */
  peek?: boolean
}

const refuse = (
  code: 'ERR_FLOW_STATE_INVALID' | 'ERR_FLOW_STATE_STALE' | 'ERR_FLOW_VERSION_CHANGED',
  message: string,
  cause?: unknown,
) =>
  new FlowStateError(code, message, { cause })

/**
 * Opens an envelope sealed for `flow` and restores its snapshot.
 *
 * @throws {FlowStateError} `ERR_FLOW_STATE_INVALID` when it does not decrypt, belongs to another
 *   flow or binding, or names a state or context the flow does not have; `ERR_FLOW_STATE_STALE`
 *   when it expired; `ERR_FLOW_VERSION_CHANGED` when another version of the machine sealed it and
 *   the flow declares no migration from that version (or the migration gives up).
 */
export async function openEnvelope(
  flow: FlowDefinition<AnyStateMachine, never>,
  sealed: string,
  options: OpenOptions,
): Promise<AnyMachineSnapshot> {
  const { chart } = flow
  let payload
  try {
    payload = await openClaims(sealed, options.secrets, options.cookieName, options.at)
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) {
      throw refuse('ERR_FLOW_STATE_STALE', `${chart.id}: sealed flow expired`, error)
    }
    throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: sealed flow does not decrypt`, error)
  }
  // Audience = machine id: an envelope of another flow must never resume this one.
  if (payload.aud !== chart.id) {
    throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope was sealed for "${String(payload.aud)}"`)
  }
  if (payload.sub !== options.binding) {
    throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope is bound to another provider`)
  }
  let env: Envelope
  try {
    env = create(payload.env, EnvelopeStruct) as Envelope
  } catch (error) {
    throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope has no flow`, error)
  }
  if (env.id !== chart.id) {
    throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope holds flow "${env.id}"`)
  }
  const changed = `${chart.id}: envelope from version ${env.v}, machine is ${chart.version}`
  const versionChanged = env.v !== chart.version
  const migrate = versionChanged && Object.hasOwn(flow.migrations ?? {}, env.v) ? flow.migrations![env.v]! : undefined
  if (versionChanged && !migrate) throw refuse('ERR_FLOW_VERSION_CHANGED', changed)
  const sealedContext = env.parked === undefined ? env.context : await unparkContext(chart.id, env.parked, options)
  let sealedState: SealedFlowState = { value: env.value, context: sealedContext }
  if (migrate) {
    let migrated: SealedFlowState | null
    try {
      migrated = migrate(sealedState)
    } catch (error) {
      throw refuse('ERR_FLOW_VERSION_CHANGED', `${changed}; its migration failed`, error)
    }
    if (!migrated) throw refuse('ERR_FLOW_VERSION_CHANGED', changed)
    sealedState = migrated
  }
  let context
  try {
    context = create(sealedState.context, flow.context)
  } catch (error) {
    // Stryker disable next-line StringLiteral: eq#engine-envelope-6
    const where = error instanceof StructError ? ` at context.${error.path.join('.')}` : ''
    throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope context does not fit${where}`, error)
  }
  const label = stateLabel(sealedState.value)
  const state = chartState(chart, label)
  if (!state) {
    const cause = new RangeError(`the chart has no atomic state ${JSON.stringify(label)}`)
    throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope names an unknown state`, cause)
  }
  if (!state.awaitsRequest) {
    throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope state does not await a request`)
  }
  const snapshot = chartSnapshot(chart, state, context as Record<string, unknown>)
  // Single use: an envelope resumes its flow once. The cookie is replaced or cleared on every
  // resume, so only a copy (a replayed callback, a second tab) can arrive twice.
  if (typeof payload.jti !== 'string') throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope has no id`)
  if (!options.peek) {
    const expires = Number(payload.exp)
    const spent = options.claim
      ? await options.claim(payload.jti, Math.max(1, expires - options.at))
      : consumeOnce(payload.jti, expires)
    if (!spent) throw refuse('ERR_FLOW_STATE_INVALID', `${chart.id}: envelope was already used`)
    // Spent: its kept context is of no further use.
    // Stryker disable next-line OptionalChaining: eq#engine-envelope-park-present
    if (env.parked !== undefined) await options.park?.forget(parkedKey(env.parked))
  }
  return snapshot
}
