/**
 * The sign-in completion flow: the machine every first factor hands its verified identity to, and
 * its effects. How a user is stored differs per first factor (an OAuth account is linked, a
 * credentials account found by its id, an e-mail address verified); each first factor declares
 * it in its module (`firstFactor.storeUser`), read from the config. Everything else — the `signIn` callback, the session,
 * the events — is the same for every way of signing in, and lives only here.
 *
 * @module
 */
import type { AnyStateMachine } from 'xstate'
import { signinCompletionChart } from '../../charts/signin-completion.js'
import type { CompiledChart } from '../../engine/types.js'
import {
  ExtensionError,
  signInCompletionContext,
  type SignInCompletionContext as Context,
  type SignInCompletionEvent,
} from '../../../machines/signin-completion.logic.js'
import { defineCompiledFlow } from '../../engine/compiled-flow.js'
import type { EffectImplementation, FlowDefinition } from '../../engine/flow.js'
import type { FlowExtension } from '../../extensions.js'
import { EXTENDED_COMPOSER } from '../../extension-composer.js'
import { ConfigError } from '../../errors.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import { enrolledFactors, newChallenge } from '../../second-factor/stored.js'
import {
  askSignIn,
  signInVerdict,
  createSessionRow,
  issueJwtSession,
} from '../../session/issue.js'
import type { ProviderSession } from '../../adapters.js'
import type { Account, Profile, User } from '../../types.js'
import { signInFactorTimes } from '../../session/verification.js'
import { effects, fail } from '../effect.js'
import { deferredFlow } from '../kinds.js'
import { emitEvent } from '../emit.js'
import type { FirstFactor, ProviderSessions } from '../types.js'

export type { StoredUser, UserStore } from '../types.js'

const userOf = (context: Context) => context.user as User
const accountOf = (context: Context) => context.account as unknown as Account

/**
 * The first factor that verified the user: the flow the identity came from, as the configuration
 * registered it (the completion imports no first factor).
 *
 * @throws {TypeError} when no registered flow is a first factor by that id.
 */
function firstFactorOf(ctx: RequestContext, context: Context): FirstFactor {
  const firstFactor = ctx.config.flowById.get(context.firstFactor)?.firstFactor
  if (!firstFactor) throw new TypeError(`no first factor "${context.firstFactor}"`)
  return firstFactor
}

/** The context the completion's effects receive. */
type Env = FlowContext

const userIdOf = (context: Context) => String(userOf(context).id)

/**
 * The provider session the sign-in came through, which the provider may end later (OpenID Connect
 * back- or front-channel logout), with the first factor's way of naming and recording it; `null`
 * for a first factor without one.
 */
function providerSessionOf(ctx: RequestContext, context: Context): { session: ProviderSession; sessions: ProviderSessions } | null {
  const sessions = firstFactorOf(ctx, context).providerSessions
  const session = sessions?.of(context.account as Record<string, unknown>) ?? null
  return sessions && session ? { session, sessions } : null
}

/** The effects of the built-in chart, for `machine` (the built-in chart, built on first use). */
const coreEffectsOf = (machine: AnyStateMachine | CompiledChart<Context>) => effects<Context, SignInCompletionEvent, Env>(machine, {
  async checkSignIn(context, ctx) {
    return signInVerdict(
      await askSignIn(ctx, {
        user: userOf(context),
        account: accountOf(context),
        ...(context.profile ? { profile: context.profile as Profile } : {}),
        ...(context.credentials ? { credentials: context.credentials } : {}),
      }),
    )
  },

  async storeUser(context, ctx) {
    const stored = await firstFactorOf(ctx, context).storeUser(ctx, context)
    return 'notLinked' in stored ? fail('notLinked', { error: stored.notLinked }) : stored
  },

  async findSecondFactor(context, ctx) {
    const factors = await enrolledFactors(ctx.config.adapter, userIdOf(context))
    if (factors.length === 0) return { challenge: null }
    // Fail closed: a stored factor nobody can check here must not be stepped over. The sign-in is
    // refused (the Configuration error page) until the configuration names `secondFactor: totp()`.
    if (!ctx.config.secondFactor) throw secondFactorModuleMissing()
    // A challenge id names this sign-in's attempts in the store, whatever cookie comes back.
    return { challenge: newChallenge() }
  },

  async verifySecondFactor(context, ctx, trigger) {
    // Only a user with an enrolled factor is asked for a code: the adapter lists second factors.
    const { adapter } = ctx
    // Stryker disable next-line ConditionalExpression,StringLiteral: eq#completion-factor-without-adapter
    if (!adapter) throw new TypeError('a second factor was found without an adapter')
    const secondFactor = ctx.config.secondFactor
    if (!secondFactor) throw secondFactorModuleMissing()
    const userId = userIdOf(context)
    const { deviceCookie, deviceMark, knownDevice } = await import('../../second-factor/device.js')
    const cookie = deviceCookie(ctx.cookies.sessionToken)
    const device = await knownDevice(ctx.request.cookies[cookie.name], userId, ctx.config.secrets)
    const check = await secondFactor.checkCode({
      adapter,
      store: ctx.config.store,
      secrets: ctx.config.secrets,
      userId,
      challenge: context.challenge!,
      // Stryker disable next-line StringLiteral: eq#completion-code-required
      code: String((trigger as { code?: unknown }).code ?? ''),
      at: ctx.at,
      // Someone who knows the password lacks the owner's earlier browser and the owner's passkey:
      // codes from either are counted apart from the ones that client spends.
      client: {
        address: ctx.clientAddress,
        device: device ?? (firstFactorOf(ctx, context).amr === PASSKEY_AMR ? PASSKEY_DEVICE : undefined),
      },
      // The owner learns that their password is known, from the address the adapter stores.
      onCodesTried: async () => (await import('../../second-factor/alert.js')).sendCodesTriedNotice(ctx, userId),
    })
    if (check.ok) {
      // This browser proved the second factor: it is a known device of the user from now on.
      ctx.setCookies.push({ ...cookie, value: await deviceMark(userId, ctx.config.secrets, device) })
      return { method: check.method === 'otp' ? 'otp' : 'backup' }
    }
    if (check.reason === 'exhausted') ctx.logger.warn('second-factor-attempts-exhausted')
    if (check.reason === 'locked') ctx.logger.debug('second-factor code not checked: the user is locked', { retryAfter: check.retryAfter })
    // Stryker disable next-line ConditionalExpression: eq#completion-failure-error
    return fail(check.reason, check.reason === 'exhausted' ? { error: 'AccessDenied' } : {})
  },

  prepareSession(context, ctx) {
    return { amr: [firstFactorOf(ctx, context).amr, ...context.amr] }
  },

  async issueSession(context, ctx) {
    const provider = providerSessionOf(ctx, context)
    const output = await issueJwtSession(ctx, {
      user: userOf(context),
      account: accountOf(context),
      ...(context.profile ? { profile: context.profile as Profile } : {}),
      isNewUser: context.isNewUser,
      claims: { ...context.claims, ...assuranceClaims(context), ...(provider ? provider.sessions.claims(provider.session) : {}) },
      verified: signInFactorTimes(context.amr, ctx.at),
    })
    // A session the provider could not end later is not issued: the store's error fails the sign-in.
    if (provider && output.value !== null) {
      await provider.sessions.record(ctx, provider.session, { strategy: 'jwt', userId: userIdOf(context) })
    }
    return output
  },

  async createDatabaseSession(context, ctx) {
    const multiFactor = context.amr.length > 1 ? context.amr : undefined
    const provider = providerSessionOf(ctx, context)
    const output = await createSessionRow(
      ctx,
      userIdOf(context),
      multiFactor,
      signInFactorTimes(context.amr, ctx.at),
      provider?.session,
    )
    if (provider) {
      // Stryker disable next-line StringLiteral: eq#completion-record-strategy
      await provider.sessions.record(ctx, provider.session, { strategy: 'database', sessionToken: output.value })
    }
    return output
  },

  async emitSignInEvent(context, ctx) {
    await emitEvent(ctx, 'signIn', {
      user: userOf(context),
      account: accountOf(context),
      ...(context.profile ? { profile: context.profile as Profile } : {}),
      // Auth.js announces credentials sign-ins as `{ user, account }` only.
      ...(accountOf(context).type !== 'credentials' ? { isNewUser: context.isNewUser } : {}),
    })
    return null
  },
})

/** The `amr` of a passkey sign-in (RFC 8176 `hwk`): the first factor a password holder lacks. */
const PASSKEY_AMR = 'hwk'
/** The device a passkey sign-in's codes are counted under. */
const PASSKEY_DEVICE = 'passkey'

/** The reason logged when a user with a stored second factor signs in without the module to check it. */
export const SECOND_FACTOR_MODULE_MISSING = 'second-factor-module-missing'

/** The error a sign-in past an unchecked second factor is refused with (logged, never shown). */
function secondFactorModuleMissing(): Error {
  const error = new Error(
    `${SECOND_FACTOR_MODULE_MISSING}: the user has a stored second factor, and the configuration names no module to check it. ` +
      "Add `secondFactor: totp()` (import { totp } from 'authchart/second-factor').",
  )
  error.name = 'SecondFactorModuleMissing'
  return error
}

/**
 * What a JWT records of a multi-factor sign-in: `amr` (e.g. `['pwd', 'otp']`) and `aal: 2`. A
 * single-factor token stays exactly Auth.js's, so its cookie keeps the same size.
 */
function assuranceClaims(context: Context): Record<string, unknown> {
  return context.amr.length > 1 ? { amr: context.amr, aal: 2 } : {}
}

let builtInEffects: ReturnType<typeof coreEffectsOf> | undefined

/** The built-in chart's effects, made once, on the first sign-in (a session read needs none). */
function builtIn() {
  builtInEffects ??= coreEffectsOf(signinCompletionChart)
  return { coreEffects: builtInEffects }
}

/** The built-in sign-in completion flow definition: the chart compiled at build time. */
export const signInCompletionFlow = deferredFlow(() =>
  defineCompiledFlow<AnyStateMachine, RequestContext>({
    chart: signinCompletionChart as never,
    context: signInCompletionContext(),
    effects: builtIn().coreEffects as Record<string, EffectImplementation<unknown, RequestContext>>,
    // 3 → 4 added transitions only (a second factor locked for the minute, a denial with a reason),
    // 4 → 5 an optional context field (the selected first-sign-in step): a flow resting in any state
    // of 3 or 4 goes on in 5 as it is.
    // 5 → 6 added a transition (a reused code), so a flow of 5 goes on in 6 as it is.
    migrations: { '3': (sealed) => sealed, '4': (sealed) => sealed, '5': (sealed) => sealed },
  }),
)

/** Composes the completion with an application's extensions (`./extended.ts`, loaded on demand). */
type ExtendedComposer = (
  extensions: readonly FlowExtension[],
  coreEffects: Record<string, EffectImplementation<unknown, RequestContext>>,
) => FlowDefinition<AnyStateMachine, RequestContext>

let composeExtended: ExtendedComposer | undefined

/**
 * Loads the composer of extended completions: it builds the chart with xstate, which only an
 * application with extensions pays for. The handler awaits it before the first request of such a
 * configuration, from the loader `defineExtension` gave its extensions (or the one given).
 */
export async function loadExtendedComposer(
  from: readonly FlowExtension[] | (() => Promise<{ composeExtendedCompletion: ExtendedComposer }>),
): Promise<void> {
  if (composeExtended) return
  const load =
    typeof from === 'function'
      ? from
      : (from.map((extension) => (extension as { [EXTENDED_COMPOSER]?: typeof from })[EXTENDED_COMPOSER]).find(Boolean) as
          | (() => Promise<{ composeExtendedCompletion: ExtendedComposer }>)
          | undefined)
  if (!load) throw new ConfigError('config.extensions: make each extension with defineExtension() (from authchart)', ['extensions'])
  composeExtended ??= (await load()).composeExtendedCompletion
}

/** Whether extended completions can be composed now (the composer is loaded). */
export const canComposeExtended = (): boolean => composeExtended !== undefined

/**
 * The sign-in completion with an application's extensions (the built-in one when there are none),
 * built once per extensions array: at once when the composer is loaded, else on first use (after
 * {@link loadExtendedComposer}).
 *
 * @throws {ExtensionError} when an extension is unsafe (checked when the composer is loaded).
 */
export function signInCompletionFlowFor(
  extensions: readonly FlowExtension[],
): FlowDefinition<AnyStateMachine, RequestContext> {
  // Stryker disable next-line ConditionalExpression: eq#completion-flow-memo
  if (extensions.length === 0) return signInCompletionFlow
  const compose = () => {
    if (!composeExtended) throw new Error('The extended sign-in completion is not loaded (await loadExtendedComposer() first)')
    return composeExtended(extensions, builtIn().coreEffects as Record<string, EffectImplementation<unknown, RequestContext>>)
  }
  return composeExtended ? compose() : (deferredFlow(compose) as FlowDefinition<AnyStateMachine, RequestContext>)
}

/**
 * Makes a configuration's extended completion ready before its first request: loads the composer
 * and composes the chart, so an unsafe extension fails the configuration (as `ConfigError`) on
 * every request instead of one sign-in. `undefined` (nothing to wait for) without extensions.
 *
 * @throws {ConfigError} naming the extension and what it may not do (as a rejection).
 */
export function readyExtendedCompletion(config: {
  readonly extensions: readonly FlowExtension[]
  readonly completion: FlowDefinition<AnyStateMachine, RequestContext>
}): Promise<void> | undefined {
  if (config.extensions.length === 0) return undefined
  const compose = () => {
    try {
      void config.completion.chart
    } catch (error) {
      throw error instanceof ExtensionError ? new ConfigError(`config.extensions: ${error.message}`, ['extensions']) : error
    }
  }
  if (composeExtended) {
    compose()
    return undefined
  }
  return loadExtendedComposer(config.extensions).then(compose)
}
