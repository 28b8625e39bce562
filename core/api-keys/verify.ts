/**
 * `verifyApiKey`: the one check of a key presented with a request. It reads the adapter on every
 * call (no cache), so a revocation is seen at once by every instance sharing the adapter, and
 * writes the last-used time at most once per key per minute (a store claim decides which request).
 *
 * @module
 */
import { assertConfig, type ResolvedConfig } from '../config/resolve-config.js'
import type { AuthConfig } from '../types.js'
import { notifyStandalone } from '../observe/notify.js'
import { keySecretMatches, parseApiKey } from './secret.js'
import type { AdapterApiKey, ApiKeyAdapterMethods } from './types.js'

/** The key a request was verified with: its owner and what it may do (never its secret). */
export interface VerifiedApiKey {
  readonly id: string
  readonly userId: string
  /** The organisation that owns the key, or `null` for a personal key of {@link userId}. */
  readonly organizationId: string | null
  readonly name: string
  readonly scopes: readonly string[]
}

/** The answer of {@link verifyApiKey}: the key, or the response to send instead. */
export type ApiKeyVerification =
  | { readonly ok: true; readonly key: VerifiedApiKey }
  | { readonly ok: false; readonly status: 401 | 403 | 503; readonly response: Response }

/** The options of {@link verifyApiKey}. */
export interface VerifyApiKeyOptions {
  /** Scopes the key must all hold (exact `resource:action` strings); none by default. */
  scopes?: readonly string[] | undefined
  /**
   * The organisation the request acts in: only a key that organisation owns passes (a personal
   * key, or another organisation's, is answered 403 `insufficient_scope`).
   */
  organizationId?: string | undefined
}

/** The adapter of a configuration with API keys (checked at load to have the methods). */
export type ApiKeyAdapter = Required<ApiKeyAdapterMethods>

/** The resolved configuration and its API-key options, or a `TypeError` without `apiKeys()`. */
export function apiKeysConfig(config: AuthConfig): { resolved: ResolvedConfig; adapter: ApiKeyAdapter } {
  const resolved = assertConfig(config)
  if (!resolved.apiKeys || !resolved.adapter) throw new TypeError("API keys are not configured: add `apiKeys: apiKeys()` from 'authchart/api-keys'")
  return { resolved, adapter: resolved.adapter as unknown as ApiKeyAdapter }
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const

// One answer for every wrong key (unknown id, wrong secret, revoked, expired, malformed): which
// part was wrong would tell a guesser which ids exist.
function refusal(status: 401 | 403 | 503, challenge: string | undefined, error: string, extra: Record<string, string> = {}): ApiKeyVerification {
  const headers: Record<string, string> = { ...JSON_HEADERS, ...extra }
  if (challenge !== undefined) headers['www-authenticate'] = challenge
  return { ok: false, status, response: new Response(JSON.stringify({ error }), { status, headers }) }
}

const invalidToken = () => refusal(401, 'Bearer error="invalid_token"', 'invalid_token')

/** The longest key id an audit event names (ours are 12 characters; a longer one is no key of ours). */
const MAX_RECORDED_ID = 32

/**
 * Tells the audit trail (if the configuration has one) that a presented key was refused: by its
 * prefix only, and its owner when the id is a stored key's. Costs nothing without one.
 */
async function recordRefusal(
  resolved: ResolvedConfig,
  request: Request,
  id: string,
  owner: string | undefined,
  answer: ApiKeyVerification,
): Promise<ApiKeyVerification> {
  if (resolved.observers.length === 0 || answer.ok) return answer
  const prefix = resolved.apiKeys!.options.prefix
  const source = { header: (name: string) => request.headers.get(name), clientAddress: undefined }
  const error = answer.status === 403 ? 'insufficient_scope' : 'invalid_token'
  await notifyStandalone(
    resolved,
    source,
    'api-key-refused',
    { ...(owner !== undefined ? { userId: owner } : {}), ...(id.length <= MAX_RECORDED_ID ? { apiKey: `${prefix}_${id}` } : {}) },
    { error },
  )
  return answer
}

/** The key the request presents in `header` (`Bearer <key>` in `Authorization`), if any. */
function presentedKey(request: Request, header: string): string | undefined {
  const value = request.headers.get(header)?.trim()
  if (!value) return undefined
  if (header !== 'authorization') return value
  const match = /^Bearer +(\S+)$/i.exec(value)
  return match ? match[1] : ''
}

/** Whether `key` is live at `now`: neither revoked nor expired. */
function isLive(key: AdapterApiKey, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || new Date(key.expiresAt).getTime() > now)
}

/** Whether `secret` is the key's current secret, or its previous one inside the rotation overlap. */
async function secretMatches(secrets: readonly string[], key: AdapterApiKey, secret: string, now: number): Promise<boolean> {
  const current = await keySecretMatches(secrets, key.id, secret, key.hash)
  const overlapOpen = new Date(key.previousUntil ?? 0).getTime() > now
  // Hashed whether or not the overlap is open, so the time taken tells nothing of the rotation.
  const previous = await keySecretMatches(secrets, key.id, secret, key.previousHash ?? '')
  return current || (overlapOpen && previous)
}

/** Records the key's use, at most once per key per minute across every instance sharing the store. */
async function recordUse(resolved: ResolvedConfig, adapter: ApiKeyAdapter, id: string, now: number): Promise<void> {
  try {
    if (!(await resolved.store.claim(`api-key:seen:${id}:${Math.floor(now / 60_000)}`, 60))) return
    await adapter.updateApiKey({ id, lastUsedAt: new Date(now) })
  } catch (error) {
    // The last-used time is a record, not a check: losing one write refuses nothing.
    resolved.logger.error(error instanceof Error ? error : new Error(String(error)))
  }
}

/**
 * Verifies the API key `request` presents (`Authorization: Bearer <key>`, or the header
 * `apiKeys({ header })` names) under `config`: its owner and scopes, or the response to send.
 *
 * - 401 with `WWW-Authenticate: Bearer error="invalid_token"` for a key that is wrong in any way
 *   (unknown, wrong secret, revoked, expired, malformed); with only `Bearer` when none was sent.
 * - 403 with `error="insufficient_scope"` for a live key that lacks one of `options.scopes`, or
 *   that `options.organizationId` does not own.
 * - 503 with `Retry-After` when the adapter cannot answer (the key is not let through).
 *
 * The scopes are the stored key's; nothing in the request can add one.
 *
 * @throws {TypeError} when `config` has no `apiKeys()`.
 */
export async function verifyApiKey(request: Request, config: AuthConfig, options: VerifyApiKeyOptions = {}): Promise<ApiKeyVerification> {
  const { resolved, adapter } = apiKeysConfig(config)
  const { prefix, header } = resolved.apiKeys!.options
  const presented = presentedKey(request, header)
  if (presented === undefined) return refusal(401, 'Bearer', 'invalid_request')
  const parsed = parseApiKey(presented, prefix)
  if (!parsed) return invalidToken()
  const now = Date.now()
  let stored: AdapterApiKey | null
  try {
    stored = await adapter.getApiKey(parsed.id)
  } catch (error) {
    resolved.logger.error(error instanceof Error ? error : new Error(String(error)))
    return refusal(503, undefined, 'temporarily_unavailable', { 'retry-after': String(resolved.availability.retryAfter) })
  }
  // An unknown id is hashed too, so its answer takes the time a wrong secret's does.
  const matches = await secretMatches(resolved.secrets, stored ?? UNKNOWN_KEY, parsed.secret, now)
  if (!stored || stored.id !== parsed.id || !matches || !isLive(stored, now)) {
    return recordRefusal(resolved, request, parsed.id, stored?.id === parsed.id ? stored.userId : undefined, invalidToken())
  }
  const missing = (options.scopes ?? []).filter((scope) => !stored.scopes.includes(scope))
  const otherOrganization = options.organizationId !== undefined && (stored.organizationId ?? null) !== options.organizationId
  if (missing.length > 0 || otherOrganization) {
    const forbidden = refusal(403, `Bearer error="insufficient_scope", scope="${(options.scopes ?? []).join(' ')}"`, 'insufficient_scope')
    return recordRefusal(resolved, request, stored.id, stored.userId, forbidden)
  }
  await recordUse(resolved, adapter, stored.id, now)
  return {
    ok: true,
    key: Object.freeze({
      id: stored.id,
      userId: stored.userId,
      organizationId: stored.organizationId ?? null,
      name: stored.name,
      scopes: Object.freeze([...stored.scopes]),
    }),
  }
}

const UNKNOWN_KEY: AdapterApiKey = {
  id: '',
  userId: '',
  name: '',
  scopes: [],
  hash: '',
  createdAt: new Date(0),
  expiresAt: null,
  revokedAt: null,
  lastUsedAt: null,
  previousHash: null,
  previousUntil: null,
}
