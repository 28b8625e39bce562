/**
 * Service accounts for the application's own routes: create (the client secret shown once), list
 * (never a secret or hash), rotate the secret, revoke. Every change names the user it acts for,
 * and an account they may not manage is answered as one that does not exist.
 *
 * An account may belong to an organisation: then a member whose role allows
 * `serviceAccount:create` creates it, with scopes their role allows (an owner: any), one whose role
 * allows `serviceAccount:revoke` revokes it, rotating takes both, and `serviceAccount:read` lists
 * them. The membership is re-read on every change.
 *
 * @module
 */
import type { ResolvedConfig } from '../config/types.js'
import type { AuthConfig } from '../types.js'
import { organizationAllows as organizationAllowsIn, scopesWithinRole } from '../organizations/membership.js'
import { createKeySecret, hashKeySecret, parseApiKey } from '../api-keys/secret.js'
import type { AdapterServiceAccount, ServiceAccountPublicJwk } from './types.js'
import { serviceAccountsConfig, type ServiceAccountAdapter } from './verify.js'

/** A service account as its owner's list shows it: never its secret, never its hash. */
export interface ListedServiceAccount {
  /** The account's id: its `client_id`. */
  id: string
  organizationId: string | null
  name: string
  scopes: string[]
  /** Which client authentications it accepts. */
  authMethods: ('client_secret' | 'private_key_jwt')[]
  createdAt: string
  revokedAt: string | null
}

/** What creating an account, or rotating its secret, answers: the secret shown this once. */
export interface IssuedServiceAccount {
  clientId: string
  /** Not stored, not shown again; absent for an account created with a public key only. */
  clientSecret?: string | undefined
  serviceAccount: ListedServiceAccount
}

/** The input of {@link createServiceAccount}. */
export interface NewServiceAccount {
  /** 1 to 100 characters. */
  name: string
  /** `resource:action` strings, at most 50: the most a token of the account may carry. */
  scopes: readonly string[]
  /** The organisation that is to own it; without it, a personal account of its creator. */
  organizationId?: string | undefined
  /**
   * The public key of `private_key_jwt` client authentication (Ed25519, P-256 or RSA). With it the
   * account gets no client secret unless `clientSecret: true` asks for one too.
   */
  publicJwk?: ServiceAccountPublicJwk | undefined
  clientSecret?: boolean | undefined
}

const MAX_SCOPES = 50
const SCOPE = /^[A-Za-z0-9_.-]{1,64}:[A-Za-z0-9_.-]{1,64}$/
const ORGANIZATION_ID = /^[^\s]{1,256}$/
const B64URL = /^[A-Za-z0-9_-]{1,1024}$/
/** The prefix the generated secret carries before its id (it is not part of the client id). */
const SECRET_PREFIX = 'sa'

/** The public key checked and copied to its public members. @throws {TypeError} for one we cannot verify with. */
function checkedPublicJwk(jwk: unknown): ServiceAccountPublicJwk {
  const given = (typeof jwk === 'object' && jwk !== null ? jwk : {}) as Record<string, unknown>
  if ('d' in given || 'p' in given || 'k' in given) throw new TypeError('a service account registers a public key only')
  const field = (name: string) => (typeof given[name] === 'string' && B64URL.test(given[name] as string) ? (given[name] as string) : undefined)
  if (given.kty === 'OKP' && given.crv === 'Ed25519' && field('x')) return { kty: 'OKP', crv: 'Ed25519', x: field('x')! }
  if (given.kty === 'EC' && given.crv === 'P-256' && field('x') && field('y')) return { kty: 'EC', crv: 'P-256', x: field('x')!, y: field('y')! }
  if (given.kty === 'RSA' && field('n') && field('e') && field('n')!.length >= 342) return { kty: 'RSA', n: field('n')!, e: field('e')! }
  throw new TypeError('a service-account public key is an Ed25519, P-256 or RSA (2048 bits or more) public JWK')
}

/**
 * The input checked.
 *
 * @throws {TypeError} naming the field that is wrong (never echoing a value).
 */
export function checkNewServiceAccount(input: unknown): NewServiceAccount {
  const given = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>
  const { name, scopes, organizationId, publicJwk, clientSecret } = given
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 100) throw new TypeError('a service account name is 1 to 100 characters')
  if (!Array.isArray(scopes) || scopes.length > MAX_SCOPES || !scopes.every((scope) => typeof scope === 'string' && SCOPE.test(scope))) {
    throw new TypeError(`service account scopes are at most ${MAX_SCOPES} resource:action strings`)
  }
  if (organizationId !== undefined && (typeof organizationId !== 'string' || !ORGANIZATION_ID.test(organizationId))) {
    throw new TypeError('a service account organizationId is an organisation id')
  }
  if (clientSecret !== undefined && typeof clientSecret !== 'boolean') throw new TypeError('a service account clientSecret is true or false')
  return {
    name,
    scopes: [...new Set(scopes as string[])],
    ...(organizationId !== undefined ? { organizationId } : {}),
    ...(publicJwk !== undefined ? { publicJwk: checkedPublicJwk(publicJwk) } : {}),
    ...(clientSecret !== undefined ? { clientSecret } : {}),
  }
}

/** The listing of `account`. */
export function listedAccount(account: AdapterServiceAccount): ListedServiceAccount {
  return {
    id: account.id,
    organizationId: account.organizationId ?? null,
    name: account.name,
    scopes: [...account.scopes],
    authMethods: [...(account.publicJwk ? (['private_key_jwt'] as const) : []), ...(account.secretHash ? (['client_secret'] as const) : [])],
    createdAt: new Date(account.createdAt).toISOString(),
    revokedAt: account.revokedAt ? new Date(account.revokedAt).toISOString() : null,
  }
}

type AccountAction = 'read' | 'create' | 'revoke'

/** Whether `userId` may do every one of `actions` to service accounts of `organizationId` (`null`: no active member of it). */
const organizationAllows = (resolved: ResolvedConfig, organizationId: string, userId: string, actions: readonly AccountAction[]) =>
  organizationAllowsIn(resolved, organizationId, userId, 'serviceAccount', actions)

/** The account `id` if `userId` may do `actions` to it; `null` otherwise (as if there were none). */
async function manageableAccount(
  resolved: ResolvedConfig,
  adapter: ServiceAccountAdapter,
  userId: string,
  id: string,
  actions: readonly AccountAction[],
): Promise<AdapterServiceAccount | null> {
  if (typeof id !== 'string' || id.length === 0 || id.length > 64) return null
  const account = await adapter.getServiceAccount(id)
  if (!account || account.id !== id) return null
  const organizationId = account.organizationId ?? null
  if (organizationId === null) return account.userId === userId ? account : null
  const verdict = await organizationAllows(resolved, organizationId, userId, actions)
  return verdict?.allowed ? account : null
}

/** A new client secret for account `id`: the secret and its keyed hash. */
async function newSecret(resolved: ResolvedConfig, id: string): Promise<{ secret: string; hash: string }> {
  const { secret } = parseApiKey(createKeySecret(SECRET_PREFIX).key, SECRET_PREFIX)!
  return { secret, hash: await hashKeySecret(resolved.secrets[0], id, secret) }
}

/**
 * Creates a service account for `userId`: the client id and (unless only a public key is
 * registered) the client secret, shown this once; the adapter keeps its keyed hash. With
 * `organizationId`, the organisation owns it: `userId` must be an active member whose role allows
 * `serviceAccount:create` and every scope asked (an owner: any), else `null`.
 *
 * @throws {TypeError} for input {@link checkNewServiceAccount} refuses, or a configuration without `serviceAccounts()`.
 */
export async function createServiceAccount(config: AuthConfig, userId: string, input: NewServiceAccount): Promise<IssuedServiceAccount | null> {
  const { resolved, adapter } = serviceAccountsConfig(config)
  const { name, scopes, organizationId, publicJwk, clientSecret } = checkNewServiceAccount(input)
  if (organizationId !== undefined) {
    const verdict = await organizationAllows(resolved, organizationId, userId, ['create'])
    if (!verdict || !verdict.allowed || !scopesWithinRole(resolved, verdict.membership, scopes)) return null
  }
  const { id } = createKeySecret(SECRET_PREFIX)
  const secret = publicJwk === undefined || clientSecret === true ? await newSecret(resolved, id) : undefined
  const stored = await adapter.createServiceAccount({
    id,
    userId,
    organizationId: organizationId ?? null,
    name,
    scopes: [...scopes],
    secretHash: secret?.hash ?? null,
    publicJwk: publicJwk ?? null,
    createdAt: new Date(),
    revokedAt: null,
  })
  return { clientId: id, ...(secret ? { clientSecret: secret.secret } : {}), serviceAccount: listedAccount(stored) }
}

/**
 * The personal service accounts of `userId`, oldest first; with `organizationId`, those the
 * organisation owns, for a member whose role allows `serviceAccount:read` (`null` for anyone else).
 *
 * @throws {TypeError} for a configuration without `serviceAccounts()`.
 */
export async function listServiceAccounts(config: AuthConfig, userId: string, organizationId?: string): Promise<ListedServiceAccount[] | null> {
  const { resolved, adapter } = serviceAccountsConfig(config)
  if (organizationId === undefined) {
    // A store that answers more than asked (another user's rows) must not show them.
    return (await adapter.listServiceAccounts(userId)).filter((account) => account.userId === userId && account.organizationId === null).map(listedAccount)
  }
  const verdict = await organizationAllows(resolved, organizationId, userId, ['read'])
  if (!verdict?.allowed) return null
  return (await adapter.listOrganizationServiceAccounts(organizationId)).filter((account) => account.organizationId === organizationId).map(listedAccount)
}

/**
 * Gives the live account `id` a new client secret (in the answer, once); the old one stops
 * working at once, on every instance sharing the adapter. `null` when `userId` may not manage it.
 *
 * @throws {TypeError} for a configuration without `serviceAccounts()`.
 */
export async function rotateServiceAccountSecret(config: AuthConfig, userId: string, id: string): Promise<IssuedServiceAccount | null> {
  const { resolved, adapter } = serviceAccountsConfig(config)
  const account = await manageableAccount(resolved, adapter, userId, id, ['create', 'revoke'])
  if (!account || account.revokedAt !== null) return null
  const secret = await newSecret(resolved, account.id)
  const updated = await adapter.updateServiceAccount({ id: account.id, secretHash: secret.hash })
  if (!updated) return null
  return { clientId: account.id, clientSecret: secret.secret, serviceAccount: listedAccount(updated) }
}

/**
 * Revokes the account `id` for `userId`: its secret and key stop authenticating, and
 * `verifyServiceToken` refuses its tokens, at once on every instance sharing the adapter. `false`
 * when `userId` may not manage it or it was revoked already.
 *
 * @throws {TypeError} for a configuration without `serviceAccounts()`.
 */
export async function revokeServiceAccount(config: AuthConfig, userId: string, id: string): Promise<boolean> {
  const { resolved, adapter } = serviceAccountsConfig(config)
  const account = await manageableAccount(resolved, adapter, userId, id, ['revoke'])
  if (!account || account.revokedAt !== null) return false
  return (await adapter.updateServiceAccount({ id: account.id, revokedAt: new Date() })) !== null
}
