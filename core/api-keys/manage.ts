/**
 * A user's API keys: create (the secret shown once), list (never a secret or hash), revoke and
 * rotate, for the application's own routes and for `{basePath}/api-keys` (see `./routes.ts`).
 * Every change names the user it acts for, and a key they may not manage is answered as one that
 * does not exist: the id alone (it is printed in the key) never lets anyone touch a key.
 *
 * A key may belong to an organisation (`organizationId`): then a member whose role in it allows
 * `apiKey:create` creates it, with scopes their role allows (an owner: any), one whose role allows
 * `apiKey:revoke` revokes it, rotating takes both, and `apiKey:read` lists the organisation's keys. The membership is re-read on every
 * change, so a removed member or a demoted admin manages nothing from their next request.
 *
 * @module
 */
import type { ResolvedConfig } from '../config/types.js'
import type { AuthConfig } from '../types.js'
import { organizationAllows as organizationAllowsIn, scopesWithinRole } from '../organizations/membership.js'
import { createKeySecret, hashKeySecret, parseApiKey } from './secret.js'
import type { AdapterApiKey } from './types.js'
import { apiKeysConfig, type ApiKeyAdapter } from './verify.js'

/** A key as its owner's list shows it: never its secret, never its hash. */
export interface ListedApiKey {
  id: string
  /** The start of the key as its owner sees it (`<prefix>_<id>`): public, enough to recognise it. */
  prefix: string
  /** The organisation that owns the key, or `null` for a personal key. */
  organizationId: string | null
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
  /** The organisation that is to own the key; without it, a personal key of its creator. */
  organizationId?: string | undefined
}

/** Why a change of a key was not made. */
export type ApiKeyRefusal =
  /** No such key, or one the user may not manage (the same answer: ids are not secrets). */
  | 'NotFound'
  /** The user's role in the organisation does not allow it (or a scope asked is beyond it). */
  | 'Forbidden'

/** The largest number of scopes on one key. */
export const MAX_SCOPES = 50
const SCOPE = /^[A-Za-z0-9_.-]{1,64}:[A-Za-z0-9_.-]{1,64}$/
const ORGANIZATION_ID = /^[^\s]{1,256}$/

const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null)

/** The listing of `key` under `prefix`: the fields a list may show, and none of its secret. */
export function listed(key: AdapterApiKey, prefix: string, now = Date.now()): ListedApiKey {
  const overlapOpen = key.previousHash !== null && key.previousUntil !== null && new Date(key.previousUntil).getTime() > now
  return {
    id: key.id,
    prefix: `${prefix}_${key.id}`,
    organizationId: key.organizationId ?? null,
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
 * The input checked: a name, scopes, expiry and owning organisation as {@link NewApiKey} says.
 *
 * @throws {TypeError} naming the field that is wrong (never echoing a value).
 */
export function checkNewApiKey(input: unknown): NewApiKey {
  const given = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>
  const { name, scopes, expiresIn, organizationId } = given
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 100) throw new TypeError('an API key name is 1 to 100 characters')
  if (!Array.isArray(scopes) || scopes.length > MAX_SCOPES || !scopes.every((scope) => typeof scope === 'string' && SCOPE.test(scope))) {
    throw new TypeError(`API key scopes are at most ${MAX_SCOPES} resource:action strings`)
  }
  if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !Number.isSafeInteger(expiresIn) || expiresIn <= 0)) {
    throw new TypeError('an API key expiresIn is a positive whole number of seconds')
  }
  if (organizationId !== undefined && (typeof organizationId !== 'string' || !ORGANIZATION_ID.test(organizationId))) {
    throw new TypeError('an API key organizationId is an organisation id')
  }
  return {
    name,
    scopes: [...new Set(scopes as string[])],
    ...(expiresIn !== undefined ? { expiresIn } : {}),
    ...(organizationId !== undefined ? { organizationId } : {}),
  }
}

/** The `apiKey:<action>` permissions a change (or the list) asks of a member of the key's organisation. */
type KeyAction = 'read' | 'create' | 'revoke'

/** Whether `userId` may do every one of `actions` to keys of `organizationId` (`null`: no active member of it). */
const organizationAllows = (resolved: ResolvedConfig, organizationId: string, userId: string, actions: readonly KeyAction[]) =>
  organizationAllowsIn(resolved, organizationId, userId, 'apiKey', actions)

/**
 * The key `id` if `userId` may do `actions` to it, else the refusal. A personal key is its
 * creator's alone; an organisation's key is managed by the members whose role allows it. Anyone
 * else is told there is no such key.
 */
export async function manageableKey(
  resolved: ResolvedConfig,
  adapter: ApiKeyAdapter,
  userId: string,
  id: string,
  actions: readonly KeyAction[],
): Promise<AdapterApiKey | ApiKeyRefusal> {
  const key = await adapter.getApiKey(id)
  if (!key || key.id !== id) return 'NotFound'
  const organizationId = key.organizationId ?? null
  if (organizationId === null) return key.userId === userId ? key : 'NotFound'
  const verdict = await organizationAllows(resolved, organizationId, userId, actions)
  if (!verdict) return 'NotFound'
  return verdict.allowed ? key : 'Forbidden'
}

/** Creates a key for `userId` as {@link createApiKey} does, or the refusal for an organisation's. */
export async function issueApiKey(
  resolved: ResolvedConfig,
  adapter: ApiKeyAdapter,
  userId: string,
  input: NewApiKey,
): Promise<IssuedApiKey | ApiKeyRefusal> {
  const { name, scopes, expiresIn, organizationId } = checkNewApiKey(input)
  if (organizationId !== undefined) {
    const verdict = await organizationAllows(resolved, organizationId, userId, ['create'])
    if (!verdict || !verdict.allowed || !scopesWithinRole(resolved, verdict.membership, scopes)) return 'Forbidden'
  }
  const prefix = resolved.apiKeys!.options.prefix
  const { id, key } = createKeySecret(prefix)
  const now = Date.now()
  const stored = await adapter.createApiKey({
    id,
    userId,
    ...(organizationId !== undefined ? { organizationId } : {}),
    name,
    scopes: [...scopes],
    hash: await hashKeySecret(resolved.secrets[0], id, parseApiKey(key, prefix)!.secret),
    createdAt: new Date(now),
    expiresAt: expiresIn === undefined ? null : new Date(now + expiresIn * 1000),
    revokedAt: null,
    lastUsedAt: null,
    previousHash: null,
    previousUntil: null,
  })
  return { key, apiKey: listed(stored, prefix, now) }
}

/** Revokes `key` (one the user may manage): the key as revoked, or `null` when it was revoked already. */
export async function revokeKey(adapter: ApiKeyAdapter, key: AdapterApiKey): Promise<AdapterApiKey | null> {
  if (key.revokedAt !== null) return null
  return adapter.updateApiKey({ id: key.id, revokedAt: new Date() })
}

/** The rotation overlap asked, or the configured one. @throws {TypeError} for one that is not whole seconds ≥ 0. */
export function overlapOf(resolved: ResolvedConfig, overlap: unknown): number {
  const seconds = overlap ?? resolved.apiKeys!.options.rotationOverlap
  if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds < 0) {
    throw new TypeError('an API key rotation overlap is a whole number of seconds, 0 or more')
  }
  return seconds
}

/** Rotates `key` (one the user may manage) as {@link rotateApiKey} does; `null` for a key no longer live. */
export async function rotateKey(resolved: ResolvedConfig, adapter: ApiKeyAdapter, key: AdapterApiKey, seconds: number): Promise<IssuedApiKey | null> {
  const now = Date.now()
  if (key.revokedAt !== null || (key.expiresAt !== null && new Date(key.expiresAt).getTime() <= now)) return null
  const prefix = resolved.apiKeys!.options.prefix
  const { secret } = parseApiKey(createKeySecret(prefix).key, prefix)!
  const updated = await adapter.updateApiKey({
    id: key.id,
    hash: await hashKeySecret(resolved.secrets[0], key.id, secret),
    previousHash: seconds > 0 ? key.hash : null,
    previousUntil: seconds > 0 ? new Date(now + seconds * 1000) : null,
  })
  if (!updated) return null
  return { key: `${prefix}_${key.id}_${secret}`, apiKey: listed(updated, prefix, now) }
}

/** The keys `userId` created, oldest first, without secrets or hashes. */
export async function listKeysOf(resolved: ResolvedConfig, adapter: ApiKeyAdapter, userId: string): Promise<ListedApiKey[]> {
  const now = Date.now()
  const prefix = resolved.apiKeys!.options.prefix
  // A store that answers more than asked (another user's rows) must not show them.
  return (await adapter.listApiKeys(userId)).filter((key) => key.userId === userId).map((key) => listed(key, prefix, now))
}

/**
 * The keys `organizationId` owns, oldest first, for a member whose role allows `apiKey:read`;
 * `Forbidden` for anyone else (not a member, or a role without it).
 */
export async function listOrganizationKeys(
  resolved: ResolvedConfig,
  adapter: ApiKeyAdapter,
  userId: string,
  organizationId: string,
): Promise<ListedApiKey[] | ApiKeyRefusal> {
  const verdict = await organizationAllows(resolved, organizationId, userId, ['read'])
  if (!verdict || !verdict.allowed) return 'Forbidden'
  const now = Date.now()
  const prefix = resolved.apiKeys!.options.prefix
  // A store that answers more than asked (another organisation's rows) must not show them.
  return (await adapter.listOrganizationApiKeys(organizationId)).filter((key) => key.organizationId === organizationId).map((key) => listed(key, prefix, now))
}

/**
 * Creates an API key for `userId`: the key is in the answer, once; the adapter keeps its keyed
 * hash. With `organizationId`, the organisation owns it: `userId` must be an active member whose
 * role allows `apiKey:create` and every scope asked (an owner: any scope), else `null`.
 *
 * @throws {TypeError} for input {@link checkNewApiKey} refuses, or a configuration without `apiKeys()`.
 */
export function createApiKey(config: AuthConfig, userId: string, input: NewApiKey & { organizationId?: undefined }): Promise<IssuedApiKey>
export function createApiKey(config: AuthConfig, userId: string, input: NewApiKey): Promise<IssuedApiKey | null>
export async function createApiKey(config: AuthConfig, userId: string, input: NewApiKey): Promise<IssuedApiKey | null> {
  const { resolved, adapter } = apiKeysConfig(config)
  const issued = await issueApiKey(resolved, adapter, userId, input)
  return typeof issued === 'string' ? null : issued
}

/**
 * The API keys `userId` created (personal and organisation-owned), oldest first, without secrets
 * or hashes. With `organizationId`, the keys that organisation owns instead, for a member whose
 * role allows `apiKey:read`; `null` for anyone else.
 *
 * @throws {TypeError} for a configuration without `apiKeys()`.
 */
export function listApiKeys(config: AuthConfig, userId: string): Promise<ListedApiKey[]>
export function listApiKeys(config: AuthConfig, userId: string, organizationId: string): Promise<ListedApiKey[] | null>
export async function listApiKeys(config: AuthConfig, userId: string, organizationId?: string): Promise<ListedApiKey[] | null> {
  const { resolved, adapter } = apiKeysConfig(config)
  if (organizationId === undefined) return listKeysOf(resolved, adapter, userId)
  const keys = await listOrganizationKeys(resolved, adapter, userId, organizationId)
  return typeof keys === 'string' ? null : keys
}

/**
 * Revokes the key `id` for `userId`, at once for every instance sharing the adapter (its secret
 * and any previous one within a rotation overlap). `false` when `userId` may not manage key `id`
 * (another user's key is left untouched) or it was revoked already.
 *
 * @throws {TypeError} for a configuration without `apiKeys()`.
 */
export async function revokeApiKey(config: AuthConfig, userId: string, id: string): Promise<boolean> {
  const { resolved, adapter } = apiKeysConfig(config)
  const key = await manageableKey(resolved, adapter, userId, id, ['revoke'])
  if (typeof key === 'string') return false
  return (await revokeKey(adapter, key)) !== null
}

/**
 * Rotates the key `id` for `userId`: a new secret (in the answer, once), and the old one kept
 * working for `overlap` seconds (default: the configured `rotationOverlap`, 24 hours; 0 ends it
 * at once). `null` when `userId` may not manage a live key `id`.
 *
 * @throws {TypeError} for an overlap that is not a whole number of seconds ≥ 0, or a configuration
 *   without `apiKeys()`.
 */
export async function rotateApiKey(config: AuthConfig, userId: string, id: string, overlap?: number): Promise<IssuedApiKey | null> {
  const { resolved, adapter } = apiKeysConfig(config)
  const seconds = overlapOf(resolved, overlap)
  const key = await manageableKey(resolved, adapter, userId, id, ['create', 'revoke'])
  if (typeof key === 'string') return null
  return rotateKey(resolved, adapter, key, seconds)
}
