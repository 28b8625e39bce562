/**
 * A user's API keys: create (the secret shown once), list (never a secret or hash), revoke and
 * rotate. Every change names the user it acts for, and a key of another user is answered as one
 * that does not exist: the id alone (it is printed in the key) never lets anyone touch a key.
 *
 * @module
 */
import type { AuthConfig } from '../types.js'
import { createKeySecret, hashKeySecret, parseApiKey } from './secret.js'
import type { AdapterApiKey } from './types.js'
import { apiKeysConfig, type ApiKeyAdapter } from './verify.js'

/** A key as its owner's list shows it: never its secret, never its hash. */
export interface ListedApiKey {
  id: string
  name: string
  scopes: string[]
  /** ISO 8601 times; `null` where there is none. */
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
  /** Until when the secret before the last rotation still works, if it does. */
  previousSecretUntil: string | null
}

/** What creating or rotating a key answers: the key to copy, shown this once, and its listing. */
export interface IssuedApiKey {
  /** `<prefix>_<id>_<secret>`: not stored, not shown again. */
  key: string
  apiKey: ListedApiKey
}

/** The input of {@link createApiKey}. */
export interface NewApiKey {
  /** 1 to 100 characters, for the owner's list. */
  name: string
  /** `resource:action` strings (letters, digits, `_`, `-`, `.`), at most 50. */
  scopes: readonly string[]
  /** Seconds until the key stops working (a positive integer); without it the key does not expire. */
  expiresIn?: number | undefined
}

/** The largest number of scopes on one key. */
export const MAX_SCOPES = 50
const SCOPE = /^[A-Za-z0-9_.-]{1,64}:[A-Za-z0-9_.-]{1,64}$/

const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null)

/** The listing of `key`: the fields a list may show, and none of its secret. */
export function listed(key: AdapterApiKey, now = Date.now()): ListedApiKey {
  const overlapOpen = key.previousHash !== null && key.previousUntil !== null && new Date(key.previousUntil).getTime() > now
  return {
    id: key.id,
    name: key.name,
    scopes: [...key.scopes],
    createdAt: new Date(key.createdAt).toISOString(),
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    revokedAt: iso(key.revokedAt),
    previousSecretUntil: overlapOpen ? iso(key.previousUntil) : null,
  }
}

/**
 * The input checked: a name, scopes and expiry as {@link NewApiKey} says.
 *
 * @throws {TypeError} naming the field that is wrong (never echoing a value).
 */
export function checkNewApiKey(input: unknown): NewApiKey {
  const given = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>
  const { name, scopes, expiresIn } = given
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 100) throw new TypeError('an API key name is 1 to 100 characters')
  if (!Array.isArray(scopes) || scopes.length > MAX_SCOPES || !scopes.every((scope) => typeof scope === 'string' && SCOPE.test(scope))) {
    throw new TypeError(`API key scopes are at most ${MAX_SCOPES} resource:action strings`)
  }
  if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !Number.isSafeInteger(expiresIn) || expiresIn <= 0)) {
    throw new TypeError('an API key expiresIn is a positive whole number of seconds')
  }
  return { name, scopes: [...new Set(scopes as string[])], ...(expiresIn !== undefined ? { expiresIn } : {}) }
}

/** The key `id` if it is `userId`'s, else `null` (another user's key is answered as absent). */
async function ownKey(adapter: ApiKeyAdapter, userId: string, id: string): Promise<AdapterApiKey | null> {
  const key = await adapter.getApiKey(id)
  return key && key.userId === userId ? key : null
}

/**
 * Creates an API key for `userId`: the key is in the answer, once; the adapter keeps its keyed hash.
 *
 * @throws {TypeError} for input {@link checkNewApiKey} refuses, or a configuration without `apiKeys()`.
 */
export async function createApiKey(config: AuthConfig, userId: string, input: NewApiKey): Promise<IssuedApiKey> {
  const { resolved, adapter } = apiKeysConfig(config)
  const { name, scopes, expiresIn } = checkNewApiKey(input)
  const { id, key } = createKeySecret(resolved.apiKeys!.options.prefix)
  const now = Date.now()
  const stored = await adapter.createApiKey({
    id,
    userId,
    name,
    scopes: [...scopes],
    hash: await hashKeySecret(resolved.secrets[0], id, parseApiKey(key, resolved.apiKeys!.options.prefix)!.secret),
    createdAt: new Date(now),
    expiresAt: expiresIn === undefined ? null : new Date(now + expiresIn * 1000),
    revokedAt: null,
    lastUsedAt: null,
    previousHash: null,
    previousUntil: null,
  })
  return { key, apiKey: listed(stored, now) }
}

/**
 * The API keys of `userId`, oldest first, without secrets or hashes.
 *
 * @throws {TypeError} for a configuration without `apiKeys()`.
 */
export async function listApiKeys(config: AuthConfig, userId: string): Promise<ListedApiKey[]> {
  const { adapter } = apiKeysConfig(config)
  const now = Date.now()
  return (await adapter.listApiKeys(userId)).filter((key) => key.userId === userId).map((key) => listed(key, now))
}

/**
 * Revokes the key `id` of `userId`, at once for every instance sharing the adapter (its secret and
 * any previous one within a rotation overlap). `false` when `userId` has no key `id` (another
 * user's key is left untouched) or it was revoked already.
 *
 * @throws {TypeError} for a configuration without `apiKeys()`.
 */
export async function revokeApiKey(config: AuthConfig, userId: string, id: string): Promise<boolean> {
  const { adapter } = apiKeysConfig(config)
  const key = await ownKey(adapter, userId, id)
  if (!key || key.revokedAt !== null) return false
  await adapter.updateApiKey({ id, revokedAt: new Date() })
  return true
}

/**
 * Rotates the key `id` of `userId`: a new secret (in the answer, once), and the old one kept
 * working for `overlap` seconds (default: the configured `rotationOverlap`, 24 hours; 0 ends it
 * at once). `null` when `userId` has no live key `id`.
 *
 * @throws {TypeError} for an overlap that is not a whole number of seconds ≥ 0, or a configuration
 *   without `apiKeys()`.
 */
export async function rotateApiKey(config: AuthConfig, userId: string, id: string, overlap?: number): Promise<IssuedApiKey | null> {
  const { resolved, adapter } = apiKeysConfig(config)
  const seconds = overlap ?? resolved.apiKeys!.options.rotationOverlap
  if (!Number.isSafeInteger(seconds) || seconds < 0) throw new TypeError('an API key rotation overlap is a whole number of seconds, 0 or more')
  const key = await ownKey(adapter, userId, id)
  const now = Date.now()
  if (!key || key.revokedAt !== null || (key.expiresAt !== null && new Date(key.expiresAt).getTime() <= now)) return null
  const prefix = resolved.apiKeys!.options.prefix
  const { secret } = parseApiKey(createKeySecret(prefix).key, prefix)!
  const fresh = `${prefix}_${id}_${secret}`
  const updated = await adapter.updateApiKey({
    id,
    hash: await hashKeySecret(resolved.secrets[0], id, secret),
    previousHash: seconds > 0 ? key.hash : null,
    previousUntil: seconds > 0 ? new Date(now + seconds * 1000) : null,
  })
  if (!updated) return null
  return { key: fresh, apiKey: listed(updated, now) }
}
