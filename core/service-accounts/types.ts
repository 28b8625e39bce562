/**
 * Service accounts as the adapter stores them, the adapter methods the feature declares, and the
 * options of `serviceAccounts()`. A type module (it imports nothing), so the adapter shapes can
 * name the methods without linking the feature.
 *
 * @module
 */

/** A public key a service account signs its client assertions with (`private_key_jwt`). */
export interface ServiceAccountPublicJwk {
  kty: 'EC' | 'OKP' | 'RSA'
  kid?: string | undefined
  crv?: string | undefined
  x?: string | undefined
  y?: string | undefined
  n?: string | undefined
  e?: string | undefined
  alg?: string | undefined
}

/** One service account as stored: never its client secret, only the keyed hash of it. */
export interface AdapterServiceAccount {
  /** The account's id: its OAuth `client_id` and the `sub` of its tokens. */
  id: string
  /** The user who created it; for a personal account, its owner. */
  userId: string
  /** The organisation that owns it, if one does; `null`: a personal account of {@link userId}. */
  organizationId: string | null
  name: string
  /** The most a token of the account may carry: `resource:action` strings. */
  scopes: string[]
  /** HMAC-SHA-256 of the id and client secret under a key derived from the config secret; `null`: no secret (keys only). */
  secretHash: string | null
  /** The public key of `private_key_jwt` client authentication, if one is registered. */
  publicJwk: ServiceAccountPublicJwk | null
  createdAt: Date
  /** When it was revoked; `null`: it was not. Its secret, its key and its tokens stop working. */
  revokedAt: Date | null
}

/** The fields of an account that change after it is created. */
export type ServiceAccountChange = Pick<AdapterServiceAccount, 'id'> & Partial<Pick<AdapterServiceAccount, 'secretHash' | 'publicJwk' | 'revokedAt'>>

/**
 * The adapter methods of service accounts (ours, optional on an adapter; required when the
 * configuration names `serviceAccounts()`). The memory and PostgreSQL adapters have them.
 */
export interface ServiceAccountAdapterMethods {
  /** Ours, optional: stores a new account; throws when one with its id exists. */
  createServiceAccount?(account: AdapterServiceAccount): Promise<AdapterServiceAccount>
  /** Ours, optional: the account with id `id`, or `null`. */
  getServiceAccount?(id: string): Promise<AdapterServiceAccount | null>
  /** Ours, optional: the accounts `userId` created, oldest first. */
  listServiceAccounts?(userId: string): Promise<AdapterServiceAccount[]>
  /** Ours, optional: the accounts `organizationId` owns, oldest first. */
  listOrganizationServiceAccounts?(organizationId: string): Promise<AdapterServiceAccount[]>
  /** Ours, optional: changes an account's secret hash, key or revocation; `null` when there is none. */
  updateServiceAccount?(change: ServiceAccountChange): Promise<AdapterServiceAccount | null>
}

/** A private signing key of ours as a JWK (Ed25519 `OKP` or P-256 `EC`), with its public part. */
export interface SigningJwk {
  kty: 'OKP' | 'EC'
  crv: 'Ed25519' | 'P-256'
  x: string
  y?: string | undefined
  /** The private part; absent on a retired key kept only so that tokens in flight verify. */
  d?: string | undefined
  kid?: string | undefined
}

/** The options of `serviceAccounts()`. */
export interface ServiceAccountsOptions {
  /** The `iss` of our tokens (default: the application's origin and base path). */
  issuer?: string | undefined
  /** The `aud` of our tokens, and what `verifyServiceToken` expects by default (default: the issuer). */
  audience?: string | undefined
  /** Seconds an access token lives (default 300, at most 3,600). */
  tokenTtl?: number | undefined
  /**
   * Our signing keys, newest first: the first signs, every one is published at `{basePath}/jwks`
   * (a retired key without `d` only verifies). Without them, an Ed25519 key is derived from each
   * configured secret: rotating the secret (new one first) rotates the key, the old one still published.
   */
  signingKeys?: readonly SigningJwk[] | undefined
  /** Token requests per client id, counted in the shared store, before the endpoint answers 429 (default 20 per 60 s). */
  clientLimit?: { points: number; window: number } | undefined
}

/** The options of `serviceAccounts()`, with their defaults. */
export interface ResolvedServiceAccountsOptions {
  readonly issuer: string | undefined
  readonly audience: string | undefined
  readonly tokenTtl: number
  readonly signingKeys: readonly SigningJwk[] | undefined
  readonly clientLimit: { readonly points: number; readonly window: number }
}
