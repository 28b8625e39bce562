/**
 * The credentials sign-in flow: the first-factor machine and its effects, and how the sign-in
 * completion stores a credentials user. User mistakes (a wrong password) are `authorize.failed`
 * with reason `rejected`; anything else the application throws is logged and ends in the
 * Configuration error, so internals never reach the browser.
 *
 * @module
 */
import { CredentialsSignInContext } from '../../../machines/credentials-signin.logic.js'
import type { credentialsSignInMachine } from '../../../machines/credentials-signin.machine.js'
import { credentialsSigninChart } from '../../charts/credentials-signin.js'
import type { SignInCompletionContext } from '../../../machines/signin-completion.machine.js'
import type { AdapterAccount, AdapterUser } from '../../adapters.js'
import { defineCompiledFlow } from '../../engine/compiled-flow.js'
import { AccountNotLinked, AuthError, CallbackRouteError, CredentialsSignin } from '../../errors.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import { escapeForLog } from '../../email/normalize.js'
import { addressBucket, admitAttempt, type LimitedSubject } from '../../store/limits.js'
import { createLinkedUser } from '../../session/adapter.js'
import { lookUpAccount } from '../account.js'
import { effects, fail } from '../effect.js'
import { adapterView } from '../module.js'
import type { Account, CredentialsConfig, User } from '../../types.js'
import { emitEvent } from '../emit.js'
import type { StoredUser } from '../types.js'
import { isUnverifiedPasskeyUser } from '../passkey-users.js'

/**
 * The request `authorize` receives: the callback URL with the original query, headers and body.
 * Built only if `authorize` touches it: constructing a web Request costs more than the rest of a
 * sign-in, and most `authorize` functions never read it.
 */
function authorizeRequest(ctx: RequestContext): Request {
  let request: Request | undefined
  const real = () =>
    (request ??= new Request(ctx.request.url, {
      method: ctx.request.method,
      headers: ctx.request.headers,
      body: JSON.stringify(ctx.request.body ?? {}),
    }))
  return new Proxy(Object.create(Request.prototype) as Request, {
    get(_target, property) {
      const value = Reflect.get(real(), property, real())
      return typeof value === 'function' ? value.bind(real()) : value
    },
    has: (_target, property) => property in real(),
  })
}

function credentialsProviderOf(ctx: RequestContext, providerId: string): CredentialsConfig {
  return ctx.config.providerById.get(providerId)!.config as unknown as CredentialsConfig
}

/**
 * Stores a credentials user for a database session. The id `authorize` returned identifies the
 * credentials *account* (`providerAccountId`), never a stored user: looking users up by that id
 * (or by e-mail) would let an application's local account open another user's session, and breaks
 * adapters whose user ids are UUIDs. A first sign-in creates the user and links the account; an
 * existing user with the same e-mail address is linked only when the provider opts in with
 * `allowDangerousEmailAccountLinking`, as for OAuth, and never one signed up with a passkey for an
 * address nobody verified ({@link isUnverifiedPasskeyUser}).
 */
export async function storeCredentialsUser(
  ctx: RequestContext,
  context: SignInCompletionContext,
): Promise<StoredUser> {
  const adapter = ctx.config.adapter!
  const account = context.account as unknown as Account
  const linked = context.storedUser as unknown as AdapterUser | null
  if (linked) {
    return {
      user: linked as unknown as Record<string, unknown>,
      account: { ...account, userId: String(linked.id) },
      isNewUser: false,
    }
  }
  const authorized = context.user as User
  const provider = credentialsProviderOf(ctx, context.providerId) as CredentialsConfig & {
    allowDangerousEmailAccountLinking?: boolean
  }
  const byEmail = authorized.email ? await adapter.getUserByEmail!(authorized.email) : null
  let user: AdapterUser
  let isNewUser = false
  if (byEmail) {
    if (provider.allowDangerousEmailAccountLinking !== true) {
      ctx.logger.error(
        new AccountNotLinked('Another account already exists with the same e-mail address', {
          provider: context.providerId,
        }),
      )
      return { notLinked: 'AccountNotLinked' }
    }
    if (await isUnverifiedPasskeyUser(adapter, byEmail)) {
      ctx.logger.error(
        new AccountNotLinked('The account with this e-mail address signed up with a passkey and never verified the address', {
          provider: context.providerId,
        }),
      )
      return { notLinked: 'AccountNotLinked' }
    }
    user = byEmail
  } else {
    const fresh = {
      id: crypto.randomUUID(),
      name: authorized.name ?? null,
      email: authorized.email ?? null,
      image: authorized.image ?? null,
      emailVerified: null,
    } as unknown as AdapterUser
    // Both rows or neither: a retried sign-in never finds a user without its account.
    ;({ user } = await createLinkedUser(adapter, fresh, { ...account, userId: fresh.id } as AdapterAccount))
    await emitEvent(ctx, 'createUser', { user })
    isNewUser = true
  }
  const stored = { ...account, userId: String(user.id) } as AdapterAccount
  if (!isNewUser) await adapter.linkAccount!(stored)
  await emitEvent(ctx, 'linkAccount', { user, account: stored, profile: authorized })
  return { user: user as unknown as Record<string, unknown>, account: { ...stored }, isNewUser }
}

/**
 * The credentials account's id. With JWT sessions it is the user's id, as in Auth.js (random when
 * `authorize` gave none). A database session needs a stable one to find the user again: the id
 * `authorize` returned or, failing that, the e-mail address the application vouched for.
 *
 * @throws {TypeError} when a database session is wanted for a user with neither.
 */
function credentialsAccountId(strategy: string | undefined, returnedId: string | undefined, user: User): string {
  if (strategy !== 'database' || returnedId !== undefined) return user.id!
  if (typeof user.email === 'string' && user.email !== '') return user.email
  throw new TypeError('authorize must return an id or an email for a user to have a database session')
}

/**
 * A submitted value as the application's own `String(value)` would spell it: an array `['alice']`
 * is `alice`, as it is for a lookup such as `users.get(String(username))`. Never throws (an object
 * whose `toString` is not a function spells `[object Object]`).
 */
function spelledAs(value: unknown): string {
  try {
    return String(value)
  } catch {
    return '[object Object]'
  }
}

/**
 * What a credentials attempt is counted under: the submitted value of the provider's first declared
 * credential that is not a password (the username or e-mail field), spelled as `String()` spells it
 * whatever its shape, trimmed and lower-cased; `undefined` when the field is absent (the attempt is
 * then limited per client address only).
 */
export function attemptIdentifier(provider: CredentialsConfig, submitted: Record<string, unknown>): string | undefined {
  const fields = Object.entries((provider.credentials ?? {}) as Record<string, { type?: string } | undefined>)
  const field = fields.find(([, input]) => input?.type !== 'password')?.[0]
  const value = field === undefined ? undefined : submitted[field]
  return value === undefined ? undefined : spelledAs(value).trim().toLowerCase()
}

/**
 * The first submitted field that is neither a string nor a number (an array, an object, a
 * boolean, `null`), if any. Such a body never reaches `authorize`: a lookup written for strings
 * (`String(username)`, a SQL parameter) can read `['alice']` as `alice`, or throw on an object.
 */
export function malformedCredential(submitted: Record<string, unknown>): string | undefined {
  for (const [field, value] of Object.entries(submitted)) {
    if (typeof value !== 'string' && typeof value !== 'number') return field
  }
  return undefined
}

/** The context the credentials effects receive (a database session looks the account up). */
type Env = FlowContext<'getUserByAccount'>

type CredentialsSignInMachine = typeof credentialsSignInMachine

/** The credentials sign-in's effects. */
const credentialsEffects = effects<CredentialsSignInMachine, Env>(credentialsSigninChart, {
    async admitAttempt(context, ctx) {
      const limits = ctx.config.rateLimit.credentials
      if (!limits) return null
      const identifier = attemptIdentifier(credentialsProviderOf(ctx, context.providerId), context.credentials ?? {})
      const address = ctx.clientAddress
      const subjects: LimitedSubject[] = [
        ...(identifier !== undefined ? [{ kind: 'identifier', value: identifier, limit: limits.perIdentifier }] : []),
        ...(address ? [{ kind: 'address', value: addressBucket(address), limit: limits.perAddress }] : []),
      ]
      // A store that cannot count refuses the attempt (fail closed): answered 503 while it is down.
      const admission = await admitAttempt(ctx.config.store, `credentials:${context.providerId}`, ctx.config.secrets[0], subjects, ctx.logger)
      if (admission.allowed) return null
      // The code only: neither the identifier nor the address reaches the log.
      ctx.logger.warn('credentials-rate-limited')
      return fail('limited', { error: 'CredentialsSignin', code: 'rate_limited', retryAfter: admission.retryAfter })
    },

    async authorize(context, ctx) {
      const provider = credentialsProviderOf(ctx, context.providerId)
      const malformed = malformedCredential(context.credentials ?? {})
      if (malformed !== undefined) {
        // Answered as a wrong password (already counted by admitAttempt); the value is never logged.
        const refused = new CredentialsSignin(`The credential "${escapeForLog(malformed, 64)}" is not a string or a number`)
        ctx.logger.error(refused)
        return fail('rejected', { error: 'CredentialsSignin', code: refused.code })
      }
      try {
        const user = (await provider.authorize(
          context.credentials ?? {},
          authorizeRequest(ctx),
        )) as (User & Record<string, unknown>) | null | undefined
        if (!user) throw new CredentialsSignin()
        const returnedId = user.id?.toString()
        // Auth.js normalises the id in place; callbacks see the same object authorize returned.
        user.id = returnedId ?? crypto.randomUUID()
        const account: Account = {
          // Stryker disable next-line OptionalChaining: eq#credentials-policy
          providerAccountId: credentialsAccountId(context.policy?.strategy, returnedId, user),
          type: 'credentials',
          provider: context.providerId,
        }
        return { user, account }
      } catch (error) {
        if (error instanceof CredentialsSignin) {
          ctx.logger.error(error)
          return fail('rejected', { error: 'CredentialsSignin', code: error.code })
        }
        const reported =
          error instanceof AuthError
            ? error
            : new CallbackRouteError(error as Error, { provider: context.providerId })
        ctx.logger.error(reported)
        // Stryker disable next-line StringLiteral: eq#credentials-threw
        return fail('threw', { error: reported.type })
      }
    },

    lookUpAccount,
  },
)

/** The credentials sign-in flow definition. */
export const credentialsSignInFlow = defineCompiledFlow<CredentialsSignInMachine, RequestContext>({
  chart: credentialsSigninChart,
  context: CredentialsSignInContext,
  effects: adapterView(credentialsEffects),
})
