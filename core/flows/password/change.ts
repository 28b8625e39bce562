/**
 * The signed-in user's password effects: who is signed in (the one session authority), the change
 * checked, the hash stored or removed, and the user's other sessions ended. The route asks for a
 * recent proof (step-up) before any of it runs.
 *
 * @module
 */
import { PasswordChangeContext } from '../../../machines/password-change.logic.js'
import type { passwordChangeMachine } from '../../../machines/password-change.machine.js'
import { passwordChangeChart } from '../../charts/password-change.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import { defineFlow } from '../../engine/flow.js'
import { revokeCachedSessionTokens } from '../../session/cache.js'
import { currentSession } from '../../session/current.js'
import { endJwtSessionsOf } from '../../session/lifecycle.js'
import { effects, fail } from '../effect.js'
import { adapterView } from '../module.js'
import './adapter.js'
import { checkPolicy, hasherOf, passwordProviderOf, PASSWORD_TYPE, type PasswordConfig } from './options.js'
import { revokeTokens } from './tokens.js'

type Env = FlowContext<'getUser' | 'getUserPassword' | 'setUserPassword'>

const providerOf = (ctx: Env, providerId: string): PasswordConfig => passwordProviderOf(ctx as unknown as RequestContext, providerId)
const signedIn = (ctx: Env) => currentSession(ctx as unknown as RequestContext)

/**
 * Whether the user could still sign in without a password: a passkey, a linked account of another
 * provider, or a configured e-mail provider (which signs in any address).
 */
async function hasAnotherFactor(ctx: Env, userId: string): Promise<boolean> {
  if (ctx.config.providers.some((provider) => provider.type === 'email')) return true
  const passkeys = (await ctx.adapter.listAuthenticatorsByUserId?.(userId)) ?? []
  if (passkeys.length > 0) return true
  const accounts = (await ctx.adapter.listAccounts?.(userId)) ?? []
  return accounts.some((account) => (ctx.config.providerById.get(account.provider)?.type as string | undefined) !== PASSWORD_TYPE)
}

type PasswordChangeMachine = typeof passwordChangeMachine

const passwordChangeEffects = effects<PasswordChangeMachine, Env>(passwordChangeChart, {
  async checkChange(context, ctx) {
    const current = await signedIn(ctx)
    const user = current ? await ctx.adapter.getUser(current.user.id) : null
    if (!user) return fail('signedOut', { error: 'AccessDenied' })
    const stored = await ctx.adapter.getUserPassword(user.id)
    // `change` and `remove` need a password; `set` is for a user without one.
    if ((context.mode === 'set') !== (stored === null)) return fail('refused', { error: 'AccessDenied' })
    if (context.mode === 'remove') return null
    const verdict = await checkPolicy(providerOf(ctx, context.providerId), context.password ?? '', { email: user.email, user })
    if (!verdict.ok) return fail('invalid', { error: 'CredentialsSignin', code: `password_${verdict.reason}` })
    return null
  },

  async storePassword(context, ctx) {
    const current = (await signedIn(ctx))!
    const hash = await hasherOf(providerOf(ctx, context.providerId)).hash(context.password ?? '')
    await ctx.adapter.setUserPassword(current.user.id, hash)
    const tokens = { store: ctx.config.store, secret: ctx.config.secrets[0] }
    await revokeTokens(tokens, 'password-reset', current.user.id)
    await revokeTokens(tokens, 'password-verify', current.user.id)
    return null
  },

  async removePassword(_context, ctx) {
    const current = (await signedIn(ctx))!
    if (!(await hasAnotherFactor(ctx, current.user.id))) return fail('lastFactor', { error: 'AccessDenied' })
    await ctx.adapter.setUserPassword(current.user.id, null)
    return null
  },

  async endOtherSessions(_context, ctx) {
    const current = (await signedIn(ctx))!
    const userId = current.user.id
    // A JWT cannot be told apart from the others by the server: every one signed in until now ends, this one too.
    if (ctx.config.session.strategy === 'jwt') return endJwtSessionsOf(ctx.config, userId, ctx.at).then(() => null)
    const others = (await ctx.adapter.listSessions!(userId)).filter((session) => session.sessionToken !== current.value)
    await revokeCachedSessionTokens(ctx.config, others.map((session) => session.sessionToken), ctx.at)
    await Promise.all(others.map((session) => ctx.adapter.deleteSession!(session.sessionToken)))
    return null
  },
})

/** The password change flow definition. */
export const passwordChangeFlow = defineFlow<PasswordChangeMachine, RequestContext>({
  chart: passwordChangeChart,
  context: PasswordChangeContext,
  effects: adapterView(passwordChangeEffects),
})
