/**
 * The adapter as the engine calls it: every call debug-logged as `adapter_<method>` (tokens
 * redacted), bounded by the adapter timeout, every failure logged and rethrown as `AdapterError`
 * with the original in `cause.err` (as Auth.js does), so flows see one error type whatever the
 * database library throws. A call that times out or finds the database unreachable carries a
 * `ServiceUnavailable` there instead, with the original as its cause: the request is answered 503.
 *
 * @module
 */
import type { Adapter, AdapterAccount, AdapterUser } from '../adapters.js'
import { AdapterError } from '../errors.js'
import type { Logger } from '../logger.js'
import { DEFAULT_AVAILABILITY, markReported, outageOf, withDeadline, type ResolvedAvailability } from '../outage.js'
import type { AdapterMethod } from '../shapes.js'

export type { AdapterMethod }

type Method = (...args: unknown[]) => unknown

/** Every method of the adapter interface; class-based adapters keep theirs on the prototype. */
const ADAPTER_METHODS: readonly (keyof Adapter)[] = [
  'createUser',
  'getUser',
  'getUserByEmail',
  'getUserByAccount',
  'updateUser',
  'deleteUser',
  'linkAccount',
  'createUserAndAccount',
  'updateAccount',
  'unlinkAccount',
  'listAccounts',
  'listSessions',
  'getCompletedSteps',
  'recordCompletedStep',
  'createSession',
  'getSessionAndUser',
  'updateSession',
  'deleteSession',
  'deleteProviderSessions',
  'createVerificationToken',
  'useVerificationToken',
  'getAccount',
  'getAuthenticator',
  'createAuthenticator',
  'listAuthenticatorsByUserId',
  'updateAuthenticatorCounter',
  'listSecondFactors',
  'createSecondFactor',
  'updateSecondFactor',
  'deleteSecondFactor',
  // Organisations (`authchart/organizations`).
  'createOrganization',
  'getOrganization',
  'getOrganizationBySlug',
  'createMembership',
  'getMembership',
  'updateMembership',
  'listMemberships',
  'changeMembership',
  'updateOrganization',
  'deleteOrganization',
  'createInvitation',
  'getInvitation',
  'settleInvitation',
  'getUserPassword',
  'setUserPassword',
  'createApiKey',
  'getApiKey',
  'listApiKeys',
  'listOrganizationApiKeys',
  'updateApiKey',
  'createServiceAccount',
  'getServiceAccount',
  'listServiceAccounts',
  'listOrganizationServiceAccounts',
  'updateServiceAccount',
]

/** Methods whose first argument is a database session token. */
const TOKEN_ARGUMENT = new Set<string>(['getSessionAndUser', 'deleteSession'])
/** Methods whose second argument is a password hash (offline guessing starts from a leaked one). */
const HASH_ARGUMENT = new Set<string>(['setUserPassword'])
/** Fields that hold credentials: session and verification tokens, OAuth tokens, secrets, key hashes. */
const SECRET_FIELD = /(token|secret|password|hash)$/i
const REDACTED = '[redacted]'

function redact(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || value instanceof Date || depth > 3) return value
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    out[key] = SECRET_FIELD.test(key) && field !== null && field !== undefined ? REDACTED : redact(field, depth + 1)
  }
  return out
}

/**
 * The arguments of an adapter call as debug output may show them: a debug log is no place for a
 * session token (whoever reads it could use the session) or a provider's tokens.
 */
export function redactAdapterArgs(method: string, args: readonly unknown[]): unknown[] {
  return args.map((arg, index) =>
    ((index === 0 && TOKEN_ARGUMENT.has(method)) || (index === 1 && HASH_ARGUMENT.has(method))) && typeof arg === 'string'
      ? REDACTED
      : redact(arg, 0),
  )
}

/** A wrapped adapter: the methods the application's adapter has, instrumented. */
export function instrumentAdapter(
  adapter: Adapter,
  logger: Logger,
  availability: ResolvedAvailability = DEFAULT_AVAILABILITY,
): Adapter {
  const wrapped: Record<string, Method> = {}
  for (const name of ADAPTER_METHODS) {
    const method = adapter[name] as Method | undefined
    if (typeof method !== 'function') continue
    wrapped[name] = async (...args: unknown[]) => {
      logger.debug(`adapter_${name}`, { args: redactAdapterArgs(name, args) })
      try {
        return await withDeadline('adapter', name, availability, () => method.apply(adapter, args))
      } catch (error) {
        const reported = new AdapterError(error as Error)
        logger.error(reported)
        const outage = outageOf(reported)
        if (outage) markReported(outage)
        throw reported
      }
    }
  }
  return wrapped as Adapter
}

/**
 * Creates `user` and links `account` to it: in one transaction through the adapter's
 * `createUserAndAccount` (ours; the bundled adapters have it), else `createUser` then
 * `linkAccount` as Auth.js does.
 */
export async function createLinkedUser(
  adapter: Adapter,
  user: AdapterUser,
  account: AdapterAccount,
): Promise<{ user: AdapterUser; account: AdapterAccount }> {
  if (adapter.createUserAndAccount) return adapter.createUserAndAccount(user, account)
  const created = await adapter.createUser!(user)
  const linked = { ...account, userId: String(created.id) }
  await adapter.linkAccount!(linked)
  return { user: created, account: linked }
}


/** The methods each feature calls, so a missing one fails at boot rather than mid-sign-in. */
export const REQUIRED_METHODS = {
  /** Reading, extending, updating and ending database sessions. */
  databaseSessions: ['getSessionAndUser', 'updateSession', 'deleteSession'],
  /**
   * Credentials sign-in that creates a database session: the user is found through the credentials
   * account (`getUserByAccount`), created and linked on a first sign-in.
   */
  credentialsDatabaseSessions: ['getUserByAccount', 'getUserByEmail', 'createUser', 'linkAccount', 'createSession'],
  /** E-mail sign-in: the token's hash stored and spent, the user found, created or marked verified. */
  emailSignIn: ['createVerificationToken', 'useVerificationToken', 'getUserByEmail', 'createUser', 'updateUser'],
  /**
   * Passkeys: Auth.js's list, plus `getUserByEmail`, which its default `getUserInfo` and the
   * sign-up check call (Auth.js would fail mid-ceremony without it).
   */
  webauthn: [
    'createUser',
    'getUser',
    'getUserByEmail',
    'linkAccount',
    'getAccount',
    'getAuthenticator',
    'createAuthenticator',
    'listAuthenticatorsByUserId',
    'updateAuthenticatorCounter',
  ],
} as const satisfies Record<string, readonly AdapterMethod[]>

/** The methods of `required` that `adapter` lacks. */
export function missingMethods(adapter: Adapter, required: readonly AdapterMethod[]): AdapterMethod[] {
  return required.filter((method) => typeof adapter[method] !== 'function')
}
