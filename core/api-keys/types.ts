/**
 * API keys as the adapter stores them, the adapter methods the feature declares, and the options
 * of `apiKeys()`. A type module (it imports nothing), so the adapter shapes can name the methods
 * without linking the feature.
 *
 * @module
 */

/** One API key as stored: never its secret, only the keyed hash of it (see `./secret.ts`). */
export interface AdapterApiKey {
  /** The public id inside the key (`<prefix>_<id>_<secret>`), the record's key. */
  id: string
  /** The user who created it; for a personal key, its owner. */
  userId: string
  /**
   * The organisation that owns the key, if one does: then its members whose role allows
   * `apiKey:revoke` manage it, and its creator only while their role does. `null` or absent: a
   * personal key of {@link userId}.
   */
  organizationId?: string | null | undefined
  name: string
  /** Permissions as data: `resource:action` strings. */
  scopes: string[]
  /** HMAC-SHA-256 of the id and secret under a key derived from the config secret. */
  hash: string
  createdAt: Date
  /** When the key stops working; `null`: never. */
  expiresAt: Date | null
  /** When it was revoked; `null`: it was not. */
  revokedAt: Date | null
  /** When it was last used (written at most once a minute). */
  lastUsedAt: Date | null
  /** The hash before the last rotation: it still works until {@link previousUntil}. */
  previousHash: string | null
  previousUntil: Date | null
}

/** The fields of a key that change after it is created. */
export type ApiKeyChange = Pick<AdapterApiKey, 'id'> &
  Partial<Pick<AdapterApiKey, 'hash' | 'revokedAt' | 'lastUsedAt' | 'previousHash' | 'previousUntil'>>

/**
 * The adapter methods of API keys (ours, optional on an adapter; required when the configuration
 * names `apiKeys()`). The memory and PostgreSQL adapters have them.
 */
export interface ApiKeyAdapterMethods {
  /** Ours, optional: stores a new key; throws when a key with its id exists. */
  createApiKey?(key: AdapterApiKey): Promise<AdapterApiKey>
  /** Ours, optional: the key with id `id`, or `null`. */
  getApiKey?(id: string): Promise<AdapterApiKey | null>
  /** Ours, optional: the keys `userId` created (personal and organisation-owned), oldest first. */
  listApiKeys?(userId: string): Promise<AdapterApiKey[]>
  /** Ours, optional: the keys `organizationId` owns, oldest first. */
  listOrganizationApiKeys?(organizationId: string): Promise<AdapterApiKey[]>
  /** Ours, optional: changes a key's hash, revocation, last use or previous hash; `null` when there is none. */
  updateApiKey?(change: ApiKeyChange): Promise<AdapterApiKey | null>
}

/** The options of `apiKeys()`. */
export interface ApiKeysOptions {
  /** The prefix of every key, before the first `_` (default `ak`): 1–16 lower-case letters and digits. */
  prefix?: string | undefined
  /**
   * The request header that carries the key (default `authorization`, read as `Bearer <key>`);
   * any other header carries the key alone.
   */
  header?: string | undefined
  /** Seconds the old secret keeps working after a rotation (default 86,400: 24 hours; 0 allowed). */
  rotationOverlap?: number | undefined
}

/** The options of `apiKeys()`, with their defaults. */
export interface ResolvedApiKeysOptions {
  readonly prefix: string
  readonly header: string
  readonly rotationOverlap: number
}
