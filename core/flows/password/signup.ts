/**
 * The password sign-up's effects: the input checked, the account registered (or its owner told),
 * and the address proven by the e-mailed link together with the password chosen at sign-up.
 *
 * @module
 */
import { validate } from 'superstruct'
import { PasswordSignUpContext } from '../../../machines/password-signup.logic.js'
import type { passwordSignUpMachine } from '../../../machines/password-signup.machine.js'
import type { AdapterUser } from '../../adapters.js'
import { passwordSignupChart } from '../../charts/password-signup.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import { defineFlow } from '../../engine/flow.js'
import { addressBucket, admitAttempt, type LimitedSubject } from '../../store/limits.js'
import { effects, fail } from '../effect.js'
import { emitEvent } from '../emit.js'
import { adapterView } from '../module.js'
import './adapter.js'
import { sendPasswordMail } from './mail.js'
import { checkPolicy, hasherOf, passwordProviderOf, type PasswordConfig } from './options.js'
import { hashOf, isPending, pendingHash } from './pending.js'
import { normalisedAddress } from './signin.js'
import { issueToken, peekToken, spendToken } from './tokens.js'

/** Seconds a verification link lives by default: a day, as an e-mail sign-in link. */
export const DEFAULT_VERIFICATION_MAX_AGE = 86_400

type Env = FlowContext<'getUserByEmail' | 'getUser' | 'createUser' | 'updateUser' | 'getUserPassword' | 'setUserPassword'>

const providerOf = (ctx: Env, providerId: string): PasswordConfig => passwordProviderOf(ctx as unknown as RequestContext, providerId)
const tokensOf = (ctx: Env) => ({ store: ctx.config.store, secret: ctx.config.secrets[0] })

/** The forgotten-password link a notice points to. */
export const forgotUrl = (ctx: { authUrl: string }, providerId: string) =>
  `${ctx.authUrl}/callback/${providerId}?${new URLSearchParams({ intent: 'forgot' })}`

/** Creates the user, or `null` when a sign-up racing this one created it first. */
async function createUnverifiedUser(ctx: Env, user: AdapterUser): Promise<AdapterUser | null> {
  try {
    return await ctx.adapter.createUser(user)
  } catch (error) {
    if (await ctx.adapter.getUserByEmail(user.email)) return null
    throw error
  }
}

/** The known address's answer: the same hashing work, a notice to its owner, nothing changed. */
async function tellOwner(ctx: Env, provider: PasswordConfig, providerId: string, email: string, password: string): Promise<null> {
  await hasherOf(provider).hash(password)
  await sendPasswordMail(ctx as unknown as RequestContext, provider, { kind: 'signup-existing', to: email, url: forgotUrl(ctx, providerId) })
  return null
}

const refused = () => fail('refused', { error: 'Verification' })

type PasswordSignUpMachine = typeof passwordSignUpMachine

const passwordSignUpEffects = effects<PasswordSignUpMachine, Env>(passwordSignupChart, {
  async checkSignUp(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const email = normalisedAddress(context.email)
    if (email === null) return fail('invalid', { error: 'CredentialsSignin', code: 'invalid_email' })
    let fields: Record<string, unknown> = {}
    if (provider.signUpFields) {
      const [error, valid] = validate(context.fields ?? {}, provider.signUpFields, { coerce: true })
      if (error) return fail('invalid', { error: 'CredentialsSignin', code: 'invalid_fields' })
      fields = valid
    }
    // The policy never sees whether the address is known: its answer may not tell.
    const verdict = await checkPolicy(provider, context.password ?? '', { email, user: null })
    if (!verdict.ok) return fail('invalid', { error: 'CredentialsSignin', code: `password_${verdict.reason}` })
    return { email, fields }
  },

  async register(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const email = context.email!
    const password = context.password ?? ''
    if (await ctx.adapter.getUserByEmail(email)) return tellOwner(ctx, provider, context.providerId, email, password)
    const user = await createUnverifiedUser(ctx, {
      // The core fields come after the application's: a sign-up field never sets one.
      ...(context.fields ?? {}),
      id: crypto.randomUUID(),
      email,
      name: context.name,
      image: null,
      emailVerified: null,
    } as AdapterUser)
    if (!user) return tellOwner(ctx, provider, context.providerId, email, password)
    await ctx.adapter.setUserPassword(user.id, pendingHash(await hasherOf(provider).hash(password)))
    const maxAge = provider.verificationMaxAge ?? DEFAULT_VERIFICATION_MAX_AGE
    const token = await issueToken(tokensOf(ctx), 'password-verify', user.id, maxAge)
    const url = `${ctx.authUrl}/callback/${context.providerId}?${new URLSearchParams({ intent: 'verify', token })}`
    await sendPasswordMail(ctx as unknown as RequestContext, provider, { kind: 'verify', to: email, url, token })
    await emitEvent(ctx as unknown as RequestContext, 'createUser', { user })
    return null
  },

  async verifyAddress(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const hasher = hasherOf(provider)
    const tokens = tokensOf(ctx)
    const token = context.token ?? ''
    const password = context.password ?? ''
    const userId = await peekToken(tokens, 'password-verify', token)
    if (userId === null) {
      await hasher.dummyVerify(password)
      return refused()
    }
    const limits = ctx.config.rateLimit.credentials
    if (limits) {
      // Guesses at the password through a link count as sign-in attempts of its user.
      const subjects: LimitedSubject[] = [
        { kind: 'identifier', value: `user:${userId}`, limit: limits.perIdentifier },
        ...(ctx.clientAddress ? [{ kind: 'address' as const, value: addressBucket(ctx.clientAddress), limit: limits.perAddress }] : []),
      ]
      const admission = await admitAttempt(ctx.config.store, `credentials:${context.providerId}`, ctx.config.secrets[0], subjects, ctx.logger)
      if (!admission.allowed) return fail('limited', { error: 'Verification', retryAfter: admission.retryAfter })
    }
    const user = await ctx.adapter.getUser(userId)
    const stored = user ? await ctx.adapter.getUserPassword(userId) : null
    if (!user || stored === null || !isPending(stored)) {
      await hasher.dummyVerify(password)
      return refused()
    }
    if (user.emailVerified) {
      // Proven by its owner another way first: the pending password is not theirs.
      await ctx.adapter.setUserPassword(userId, null)
      await hasher.dummyVerify(password)
      return refused()
    }
    if (!(await hasher.verify(hashOf(stored), password)).valid) return refused()
    if ((await spendToken(tokens, 'password-verify', token, provider.verificationMaxAge ?? DEFAULT_VERIFICATION_MAX_AGE)) === null) return refused()
    const verified = await ctx.adapter.updateUser({ id: userId, emailVerified: new Date(ctx.at * 1000) })
    await ctx.adapter.setUserPassword(userId, hashOf(stored))
    await emitEvent(ctx as unknown as RequestContext, 'updateUser', { user: verified })
    return null
  },
})

/** The password sign-up flow definition. */
export const passwordSignUpFlow = defineFlow<PasswordSignUpMachine, RequestContext>({
  chart: passwordSignupChart,
  context: PasswordSignUpContext,
  effects: adapterView(passwordSignUpEffects),
})
