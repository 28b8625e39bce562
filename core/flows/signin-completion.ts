/**
 * The sign-in completion flow: the machine every first factor hands its verified identity to, and
 * its effects. How a user is stored differs per first factor (an OAuth account is linked, a
 * credentials account found by its id, an e-mail address verified); each first-factor flow
 * registers that step in {@link USER_STORES}. Everything else — the `signIn` callback, the session,
 * the events — is the same for every way of signing in, and lives only here.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import {
  buildSignInCompletion,
  signInCompletionContext,
  signInCompletionMachine,
  type SignInCompletionContext as Context,
  type SignInCompletionEvent,
} from '../../machines/signin-completion.machine.js'
import { defineFlow, type EffectImplementation, type FlowDefinition } from '../engine/flow.js'
import type { FlowExtension } from '../extensions.js'
import type { RequestContext } from '../http/context.js'
import { checkCode, enrolledFactors, newChallenge } from '../second-factor/index.js'
import {
  askSignIn,
  checkSignInResult,
  createSessionRow,
  issueJwtSession,
  reportFailure,
} from '../session/issue.js'
import type { ProviderSession } from '../adapters.js'
import type { Account, Profile, User } from '../types.js'
import { storeCredentialsUser } from './credentials.js'
import { emitEvent } from './emit.js'
import { flowModule } from './kinds.js'

/** A stored user and account, or a refusal to link them. */
export type StoredUser =
  | { user: Record<string, unknown>; account: Record<string, unknown>; isNewUser: boolean }
  | { notLinked: 'OAuthAccountNotLinked' | 'AccountNotLinked' }

/**
 * Stores the verified identity of one first factor: finds, links or creates the user. Throws on
 * outages (logged, the Configuration error); returns `notLinked` (after logging its own error)
 * when the identity belongs to someone else.
 */
export type UserStore = (ctx: RequestContext, context: Context) => Promise<StoredUser>

/** How each first factor stores its users, by the first factor's flow id. */
export const USER_STORES: Readonly<Record<string, UserStore>> = {
  'credentials-signin': storeCredentialsUser,
  // Loaded with their providers (./kinds.ts): only a configured first factor reaches its store.
  'oauth-signin': (ctx, context) => flowModule('oauth').storeOAuthUser(ctx, context),
  'email-signin': (ctx, context) => flowModule('email').storeEmailUser(ctx, context),
  'webauthn-signin': (ctx, context) => flowModule('webauthn').storeWebAuthnUser(ctx, context),
}

const userOf = (context: Context) => context.user as User
const accountOf = (context: Context) => context.account as unknown as Account

/** How the first factor proved who the user is, as an RFC 8176 `amr` value. */
const FIRST_FACTOR_AMR: Readonly<Record<string, string>> = {
  credentials: 'pwd',
  oauth: 'fed',
  oidc: 'fed',
  email: 'email',
  webauthn: 'hwk',
}

type Effect = EffectImplementation<Context, RequestContext>
type Result<T extends SignInCompletionEvent['type']> = Extract<SignInCompletionEvent, { type: T }>

const userIdOf = (context: Context) => String(userOf(context).id)

/**
 * The OpenID Connect provider session an OAuth sign-in came through, which the provider may end
 * later (back- or front-channel logout); `null` for every other first factor.
 */
const providerSessionOf = (context: Context): ProviderSession | null =>
  context.firstFactor === 'oauth-signin' ? flowModule('oauth').providerSessionOf(accountOf(context)) : null

const providerSessionClaimsOf = (session: ProviderSession | null): Record<string, unknown> =>
  session ? flowModule('oauth').providerSessionClaims(session) : {}

/** The effects of the built-in chart. */
const coreEffects: Record<string, Effect> = {
  async checkSignIn(context, ctx) {
    const verdict = await askSignIn(ctx, {
      user: userOf(context),
      account: accountOf(context),
      ...(context.profile ? { profile: context.profile as Profile } : {}),
      ...(context.credentials ? { credentials: context.credentials } : {}),
    })
    return checkSignInResult(verdict, ctx.at)
  },

  async storeUser(context, ctx): Promise<Result<'storeUser.done' | 'storeUser.failed'>> {
    const store = USER_STORES[context.firstFactor]
    try {
      if (!store) throw new TypeError(`no user store for the first factor "${context.firstFactor}"`)
      const stored = await store(ctx, context)
      if ('notLinked' in stored) {
        return { type: 'storeUser.failed', reason: 'notLinked', error: stored.notLinked, at: ctx.at }
      }
      return { type: 'storeUser.done', output: stored, at: ctx.at }
    } catch (error) {
      return { type: 'storeUser.failed', reason: 'threw', error: reportFailure(ctx, error), at: ctx.at }
    }
  },

  async findSecondFactor(context, ctx): Promise<Result<'findSecondFactor.done' | 'findSecondFactor.failed'>> {
    try {
      const factors = await enrolledFactors(ctx.config.adapter, userIdOf(context))
      // A challenge id names this sign-in's attempts in the store, whatever cookie comes back.
      return { type: 'findSecondFactor.done', output: { challenge: factors.length > 0 ? newChallenge() : null }, at: ctx.at }
    } catch (error) {
      return { type: 'findSecondFactor.failed', reason: 'threw', error: reportFailure(ctx, error), at: ctx.at }
    }
  },

  async verifySecondFactor(context, ctx, trigger): Promise<Result<'verifySecondFactor.done' | 'verifySecondFactor.failed'>> {
    try {
      const check = await checkCode({
        adapter: ctx.config.adapter!,
        store: ctx.config.store,
        secrets: ctx.config.secrets,
        userId: userIdOf(context),
        challenge: context.challenge!,
        code: String((trigger as { code?: unknown }).code ?? ''),
        at: ctx.at,
      })
      if (check.ok) return { type: 'verifySecondFactor.done', output: { method: check.method === 'otp' ? 'otp' : 'backup' }, at: ctx.at }
      if (check.reason === 'exhausted') ctx.logger.warn('second-factor-attempts-exhausted')
      if (check.reason === 'locked') ctx.logger.debug('second-factor code not checked: the user is locked', { retryAfter: check.retryAfter })
      return {
        type: 'verifySecondFactor.failed',
        reason: check.reason,
        ...(check.reason === 'exhausted' ? { error: 'AccessDenied' as const } : {}),
        at: ctx.at,
      }
    } catch (error) {
      return { type: 'verifySecondFactor.failed', reason: 'threw', error: reportFailure(ctx, error), at: ctx.at }
    }
  },

  async prepareSession(context, ctx): Promise<Result<'prepareSession.done'>> {
    const first = FIRST_FACTOR_AMR[String(accountOf(context).type)] ?? 'pwd'
    return { type: 'prepareSession.done', output: { amr: [first, ...context.amr] }, at: ctx.at }
  },

  async issueSession(context, ctx) {
    try {
      const providerSession = providerSessionOf(context)
      const output = await issueJwtSession(ctx, {
        user: userOf(context),
        account: accountOf(context),
        ...(context.profile ? { profile: context.profile as Profile } : {}),
        isNewUser: context.isNewUser,
        claims: { ...context.claims, ...assuranceClaims(context), ...providerSessionClaimsOf(providerSession) },
      })
      if (providerSession && output.value !== null) {
        await flowModule('oauth').recordProviderSession(ctx, providerSession, { strategy: 'jwt', userId: userIdOf(context) })
      }
      return { type: 'issueSession.done', output, at: ctx.at }
    } catch (error) {
      return { type: 'issueSession.failed', reason: 'threw', error: reportFailure(ctx, error), at: ctx.at }
    }
  },

  async createDatabaseSession(context, ctx) {
    try {
      const multiFactor = context.amr.length > 1 ? context.amr : undefined
      const providerSession = providerSessionOf(context)
      const output = await createSessionRow(ctx, userIdOf(context), multiFactor, providerSession ?? undefined)
      if (providerSession) {
        await flowModule('oauth').recordProviderSession(ctx, providerSession, { strategy: 'database', sessionToken: output.value })
      }
      return { type: 'createDatabaseSession.done', output, at: ctx.at }
    } catch (error) {
      return {
        type: 'createDatabaseSession.failed',
        reason: 'threw',
        error: reportFailure(ctx, error),
        at: ctx.at,
      }
    }
  },

  async emitSignInEvent(context, ctx) {
    await emitEvent(ctx, 'signIn', {
      user: userOf(context),
      account: accountOf(context),
      ...(context.profile ? { profile: context.profile as Profile } : {}),
      // Auth.js announces credentials sign-ins as `{ user, account }` only.
      ...(accountOf(context).type !== 'credentials' ? { isNewUser: context.isNewUser } : {}),
    })
    return { type: 'emitSignInEvent.done', output: null, at: ctx.at }
  },
}

/**
 * What a JWT records of a multi-factor sign-in: `amr` (e.g. `['pwd', 'otp']`) and `aal: 2`. A
 * single-factor token stays exactly Auth.js's, so its cookie keeps the same size.
 */
function assuranceClaims(context: Context): Record<string, unknown> {
  return context.amr.length > 1 ? { amr: context.amr, aal: 2 } : {}
}

/** The built-in sign-in completion flow definition. */
export const signInCompletionFlow = defineFlow<AnyStateMachine, RequestContext>({
  machine: signInCompletionMachine,
  context: signInCompletionContext(),
  effects: coreEffects as Record<string, EffectImplementation<unknown, RequestContext>>,
})

/**
 * The effects that decide whether the step at `afterFirstSignIn` runs and record that it ran: it
 * runs until the user has completed it at its step version, whichever way they sign in. Without
 * the adapter's `getCompletedSteps` and `recordCompletedStep` (or without an adapter) nothing can
 * be recorded, so it runs on every sign-in: never skipped (warned once when the config is loaded).
 */
function firstSignInStepEffects(step: FlowExtension): Record<string, Effect> {
  const version = step.stepVersion ?? step.version
  const recorder = (ctx: RequestContext) => {
    const adapter = ctx.config.adapter
    return adapter?.getCompletedSteps && adapter.recordCompletedStep ? adapter : undefined
  }
  return {
    async findCompletedStep(context, ctx): Promise<Result<'findCompletedStep.done' | 'findCompletedStep.failed'>> {
      const adapter = recorder(ctx)
      if (!adapter) return { type: 'findCompletedStep.done', output: { pending: true }, at: ctx.at }
      try {
        const completed = await adapter.getCompletedSteps!(userIdOf(context))
        const pending = !completed.some((done) => done.stepId === step.id && done.version === version)
        return { type: 'findCompletedStep.done', output: { pending }, at: ctx.at }
      } catch (error) {
        return { type: 'findCompletedStep.failed', reason: 'threw', error: reportFailure(ctx, error), at: ctx.at }
      }
    },
    async recordCompletedStep(context, ctx): Promise<Result<'recordCompletedStep.done' | 'recordCompletedStep.failed'>> {
      const adapter = recorder(ctx)
      try {
        await adapter?.recordCompletedStep!(userIdOf(context), step.id, version)
        return { type: 'recordCompletedStep.done', output: null, at: ctx.at }
      } catch (error) {
        return { type: 'recordCompletedStep.failed', reason: 'threw', error: reportFailure(ctx, error), at: ctx.at }
      }
    },
  }
}

const firstSignInStepEffectsOf = (extensions: readonly FlowExtension[]): Record<string, Effect> => {
  const step = extensions.find((extension) => extension.at === 'afterFirstSignIn')
  return step ? firstSignInStepEffects(step) : {}
}

const extendedFlows = new WeakMap<readonly FlowExtension[], FlowDefinition<AnyStateMachine, RequestContext>>()

/**
 * The sign-in completion with an application's extensions (the built-in one when there are none),
 * built once per extensions array.
 *
 * @throws {ExtensionError} when an extension is unsafe (checked when the config is loaded).
 */
export function signInCompletionFlowFor(
  extensions: readonly FlowExtension[],
): FlowDefinition<AnyStateMachine, RequestContext> {
  if (extensions.length === 0) return signInCompletionFlow
  let flow = extendedFlows.get(extensions)
  if (!flow) {
    flow = defineFlow<AnyStateMachine, RequestContext>({
      machine: buildSignInCompletion(extensions),
      context: signInCompletionContext(extensions),
      effects: {
        ...coreEffects,
        ...firstSignInStepEffectsOf(extensions),
        ...Object.assign({}, ...extensions.map((e) => e.effects ?? {})),
      } as Record<string, EffectImplementation<unknown, RequestContext>>,
    })
    extendedFlows.set(extensions, flow)
  }
  return flow
}
