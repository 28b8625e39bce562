/**
 * The password sign-in's effects: the attempt counted against the credentials rate limits, the
 * hash verified (or a dummy verification of the same cost when there is nothing to verify), an
 * outdated hash replaced, and how the sign-in completion stores the user (it is stored already).
 * Neither the password nor the address reaches a log line or an error message.
 *
 * @module
 */
import { PasswordSignInContext } from '../../../machines/password-signin.logic.js'
import type { passwordSignInMachine } from '../../../machines/password-signin.machine.js'
import type { SignInCompletionContext } from '../../../machines/signin-completion.machine.js'
import type { AdapterUser } from '../../adapters.js'
import { passwordSigninChart } from '../../charts/password-signin.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import { defaultNormalizer } from '../../email/normalize.js'
import { defineFlow } from '../../engine/flow.js'
import { addressBucket, admitAttempt, type LimitedSubject } from '../../store/limits.js'
import { effects, fail } from '../effect.js'
import { adapterView } from '../module.js'
import type { StoredUser } from '../types.js'
import './adapter.js'
import { verifyOrMigrate } from '../../password/migrate.js'
import { hasherOf, passwordProviderOf, type PasswordConfig } from './options.js'
import { hashOf, isPending } from './pending.js'

/** The answer to a wrong password and to an unknown address alike. */
const REJECTED = { error: 'CredentialsSignin', code: 'credentials' } as const

/** The typed address, normalised, or `null` when it is no address (answered as a wrong password). */
export function normalisedAddress(typed: unknown): string | null {
  try {
    return defaultNormalizer(typed)
  } catch {
    return null
  }
}

type Env = FlowContext<'getUserByEmail' | 'getUserPassword' | 'setUserPassword'>

/**
 * Verifies `password` for the user with address `email`: the stored user when it is right, `null`
 * otherwise. Every path verifies one hash, a real one or the dummy, so an unknown address is
 * answered in the time of a wrong password.
 */
export async function verifyUserPassword(
  ctx: Env,
  provider: PasswordConfig,
  email: string | null,
  password: string,
): Promise<{ user: AdapterUser; needsRehash: boolean } | null> {
  const hasher = hasherOf(provider)
  const user = email === null ? null : await ctx.adapter.getUserByEmail(email)
  const hash = user ? await ctx.adapter.getUserPassword(user.id) : null
  if (user && hash !== null && isPending(hash) && user.emailVerified) {
    // Proven by its owner another way: the password set before that is not theirs.
    await ctx.adapter.setUserPassword(user.id, null)
  } else if (user && hash !== null) {
    const { valid, needsRehash } = await hasher.verify(hashOf(hash), password)
    // A pending hash is re-hashed only once its address is proven (the marker must stay).
    return valid ? { user, needsRehash: needsRehash && !isPending(hash) } : null
  }
  if (user && hash === null) {
    // No local hash: the system the team left is asked once (`verifyLegacyPassword`), then our hash is kept.
    const legacy = provider.verifyLegacyPassword
    const result = await verifyOrMigrate(hasher, null, password, legacy && { user, verifyLegacyPassword: async (u: AdapterUser, p: string) => legacy(u, p) })
    if (!result.valid) return null
    if (result.newHash) await ctx.adapter.setUserPassword(user.id, result.newHash)
    return { user, needsRehash: false }
  }
  await hasher.dummyVerify(password)
  return null
}

type PasswordSignInMachine = typeof passwordSignInMachine

const passwordSignInEffects = effects<PasswordSignInMachine, Env>(passwordSigninChart, {
  async admitAttempt(context, ctx) {
    const limits = ctx.config.rateLimit.credentials
    if (!limits) return null
    const identifier = normalisedAddress(context.email) ?? String(context.email ?? '').trim().toLowerCase()
    const subjects: LimitedSubject[] = [
      { kind: 'identifier', value: identifier, limit: limits.perIdentifier },
      ...(ctx.clientAddress ? [{ kind: 'address' as const, value: addressBucket(ctx.clientAddress), limit: limits.perAddress }] : []),
    ]
    // The credentials limits, in the same store: a store that cannot count refuses (fail closed).
    const admission = await admitAttempt(ctx.config.store, `credentials:${context.providerId}`, ctx.config.secrets[0], subjects, ctx.logger)
    if (admission.allowed) return null
    ctx.logger.warn('credentials-rate-limited')
    return fail('limited', { error: 'CredentialsSignin', code: 'rate_limited', retryAfter: admission.retryAfter })
  },

  async verifyPassword(context, ctx) {
    const provider = passwordProviderOf(ctx as unknown as RequestContext, context.providerId)
    const verified = await verifyUserPassword(ctx, provider, normalisedAddress(context.email), context.password ?? '')
    if (!verified) return fail('rejected', REJECTED)
    // Only the holder of the right password learns that the address still waits for its proof.
    if (provider.requireEmailVerification && !verified.user.emailVerified) {
      return fail('unverified', { error: 'CredentialsSignin', code: 'email_unverified' })
    }
    return { user: verified.user as unknown as Record<string, unknown>, needsRehash: verified.needsRehash }
  },

  async rehashPassword(context, ctx) {
    const provider = passwordProviderOf(ctx as unknown as RequestContext, context.providerId)
    const userId = String(context.user!.id)
    await ctx.adapter.setUserPassword(userId, await hasherOf(provider).hash(context.password ?? ''))
    return null
  },
})

/** The password sign-in flow definition. */
export const passwordSignInFlow = defineFlow<PasswordSignInMachine, RequestContext>({
  chart: passwordSigninChart,
  context: PasswordSignInContext,
  effects: adapterView(passwordSignInEffects),
})

/** How the sign-in completion stores a password user: it is the stored user the hash belongs to. */
export async function storePasswordUser(_ctx: RequestContext, context: SignInCompletionContext): Promise<StoredUser> {
  const user = context.storedUser!
  return { user, account: { ...context.account, userId: String(user.id) }, isNewUser: false }
}
