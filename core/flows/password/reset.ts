/**
 * The forgotten-password effects: the request counted and answered alike for every address, the
 * new password checked, stored with the token spent once, and every session of the user ended.
 *
 * @module
 */
import { PasswordResetContext } from '../../../machines/password-reset.logic.js'
import type { passwordResetMachine } from '../../../machines/password-reset.machine.js'
import { passwordResetChart } from '../../charts/password-reset.js'
import type { FlowContext, RequestContext, ResolvedConfig } from '../../config/types.js'
import { defineFlow } from '../../engine/flow.js'
import { revokeCachedSessionsOf } from '../../session/cache.js'
import { endJwtSessionsOf } from '../../session/lifecycle.js'
import { addressBucket, admitAttempt, type LimitedSubject } from '../../store/limits.js'
import { effects, fail } from '../effect.js'
import { emitEvent } from '../emit.js'
import { adapterView } from '../module.js'
import './adapter.js'
import { sendPasswordMail } from './mail.js'
import { checkPolicy, hasherOf, passwordProviderOf, type PasswordConfig } from './options.js'
import { normalisedAddress } from './signin.js'
import { issueToken, peekToken, revokeTokens, spendToken } from './tokens.js'

/** Seconds a reset link lives: 15 minutes. */
export const DEFAULT_RESET_MAX_AGE = 900

/** Reset requests allowed by default in each window (an hour): per address, per client address. */
export const DEFAULT_RESET_LIMIT = { perAddress: 3, perClient: 20, window: 3600 } as const

type Env = FlowContext<'getUserByEmail' | 'getUser' | 'updateUser' | 'getUserPassword' | 'setUserPassword'>

const providerOf = (ctx: Env, providerId: string): PasswordConfig => passwordProviderOf(ctx as unknown as RequestContext, providerId)
const tokensOf = (ctx: Env) => ({ store: ctx.config.store, secret: ctx.config.secrets[0] })
const maxAgeOf = (provider: PasswordConfig) => provider.resetMaxAge ?? DEFAULT_RESET_MAX_AGE

/**
 * Ends every session of `userId`: each database row (and its cached copies), or with JWT sessions
 * every token signed in up to now, on every instance sharing the store.
 *
 * @throws {TypeError} for JWT sessions without a configured `store` (the end would hold on one instance only).
 */
export async function endEverySession(ctx: { config: ResolvedConfig; at: number; adapter?: RequestContext['adapter'] }, userId: string): Promise<void> {
  if (ctx.config.session.strategy === 'jwt') return endJwtSessionsOf(ctx.config, userId, ctx.at)
  await revokeCachedSessionsOf(ctx.config, userId, ctx.at)
  const sessions = await ctx.adapter!.listSessions!(userId)
  await Promise.all(sessions.map((session) => ctx.adapter!.deleteSession!(session.sessionToken)))
}

type PasswordResetMachine = typeof passwordResetMachine

const passwordResetEffects = effects<PasswordResetMachine, Env>(passwordResetChart, {
  async admitResetRequest(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const limits = { ...DEFAULT_RESET_LIMIT, ...provider.resetLimit }
    const address = normalisedAddress(context.email) ?? String(context.email ?? '').trim().toLowerCase()
    const subjects: LimitedSubject[] = [
      { kind: 'identifier', value: address, limit: { points: limits.perAddress, window: limits.window } },
      ...(ctx.clientAddress ? [{ kind: 'address' as const, value: addressBucket(ctx.clientAddress), limit: { points: limits.perClient, window: limits.window } }] : []),
    ]
    const admission = await admitAttempt(ctx.config.store, `password-reset:${context.providerId}`, ctx.config.secrets[0], subjects, ctx.logger)
    if (admission.allowed) return null
    // A reset request is a message to send: the e-mail throttle's code.
    ctx.logger.warn('email-send-throttled')
    return fail('limited', { error: 'EmailSignInError', retryAfter: admission.retryAfter })
  },

  async sendResetLink(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const email = normalisedAddress(context.email)
    const user = email === null ? null : await ctx.adapter.getUserByEmail(email)
    // The same store work for an unknown address: a token for no user, never sent.
    const token = await issueToken(tokensOf(ctx), 'password-reset', user ? user.id : `none:${crypto.randomUUID()}`, maxAgeOf(provider))
    if (email === null) return null
    if (user) {
      const url = `${ctx.authUrl}/callback/${context.providerId}?${new URLSearchParams({ intent: 'reset', token })}`
      await sendPasswordMail(ctx as unknown as RequestContext, provider, { kind: 'reset', to: email, url, token })
    } else {
      const url = `${ctx.authUrl}/callback/${context.providerId}?${new URLSearchParams({ intent: 'signup' })}`
      await sendPasswordMail(ctx as unknown as RequestContext, provider, { kind: 'reset-unknown', to: email, url })
    }
    return null
  },

  async checkNewPassword(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const userId = await peekToken(tokensOf(ctx), 'password-reset', context.token ?? '')
    const user = userId === null ? null : await ctx.adapter.getUser(userId)
    if (!user) return fail('refused', { error: 'Verification' })
    const verdict = await checkPolicy(provider, context.password ?? '', { email: user.email, user })
    if (!verdict.ok) return fail('invalid', { error: 'CredentialsSignin', code: `password_${verdict.reason}` })
    return null
  },

  async setPassword(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const hash = await hasherOf(provider).hash(context.password ?? '')
    // Spent here, once: of two requests racing with the same link, one sets its password.
    const userId = await spendToken(tokensOf(ctx), 'password-reset', context.token ?? '', maxAgeOf(provider))
    if (userId === null) return fail('refused', { error: 'Verification' })
    await ctx.adapter.setUserPassword(userId, hash)
    const user = await ctx.adapter.getUser(userId)
    if (user && !user.emailVerified) {
      // The link reached the address: it is proven.
      const verified = await ctx.adapter.updateUser({ id: userId, emailVerified: new Date(ctx.at * 1000) })
      await emitEvent(ctx as unknown as RequestContext, 'updateUser', { user: verified })
    }
    return { userId }
  },

  async endSessions(context, ctx) {
    const userId = context.userId!
    await endEverySession(ctx as unknown as RequestContext, userId)
    const tokens = tokensOf(ctx)
    await revokeTokens(tokens, 'password-reset', userId)
    await revokeTokens(tokens, 'password-verify', userId)
    return null
  },
})

/** The forgotten-password flow definition. */
export const passwordResetFlow = defineFlow<PasswordResetMachine, RequestContext>({
  chart: passwordResetChart,
  context: PasswordResetContext,
  effects: adapterView(passwordResetEffects),
})
