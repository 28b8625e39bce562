/**
 * The re-authentication flow: the chart (`machines/reauthenticate.machine.ts`, run compiled from
 * `core/charts/reauthenticate.ts`) and its effects.
 * Every effect asks the one authority who is signed in; the proof must be the signed-in user's,
 * (at an OpenID provider: a login no older than the request, by this user's own account there),
 * and the session it is recorded in the same live session that asked. The engine spends the sealed
 * flow in the store on its one use, so a replayed flow cookie resumes nothing.
 *
 * @module
 */
import { decodeJwt } from 'jose/jwt/decode'
import type { EventObject } from 'xstate'
import type { reauthenticateMachine } from '../../../machines/reauthenticate.machine.js'
import { reauthenticateChart } from '../../charts/reauthenticate.js'
import type { CompiledChart } from '../../engine/types.js'
import {
  REAUTHENTICATE,
  ReauthenticateContext,
  type FederatedProvider,
  type Federation,
  type ReauthFactor,
} from '../../../machines/reauthenticate.logic.js'
import type { FlowBinding } from '../../config/types.js'
import { StringParams } from '../../http/params.js'
import { atProvider, federatedProviders, federatedVerdict, signInContextOf } from './federated.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import { defineFlow } from '../../engine/flow.js'
import { deferredFlow } from '../kinds.js'
import { ENVELOPE_MAX_AGE } from '../../engine/envelope.js'
import { AccessDenied, CredentialsSignin } from '../../errors.js'
import { openEnvelope } from '../../engine/envelope.js'
import { flowCookieName, sealingFor } from '../../http/resting.js'
import { enrolledFactors, newChallenge, USER_ATTEMPT_WINDOW, userAttemptsKey } from '../../second-factor/stored.js'
import { refreshCachedSessionAfterProof } from '../../session/cache.js'
import { currentSession, type CurrentSession } from '../../session/current.js'
import { factorTimesOf } from '../../session/freshness.js'
import { sessionId } from '../../session/id.js'
import { encodeSessionToken } from '../../session/token.js'
import { FACTOR_VERIFICATION_CLAIM, withFactorVerified } from '../../session/verification.js'
import { addressBucket, admitAttempt, type LimitedSubject } from '../../store/limits.js'
import { sha256Hex, timingSafeEqual } from '../../crypto.js'
import { EmailSignInError } from '../../errors.js'
import { generateCode, generateToken } from '../../email/secrets.js'
import { admitMessageTo, recipientLimitOf } from '../../email/send-limit.js'
import type { EmailConfig, ResolvedEmailProvider } from '../../email/types.js'
import type { CredentialsConfig } from '../../types.js'
import { effects, fail, isFailure } from '../effect.js'
import { adapterView } from '../module.js'
import { attemptIdentifier } from '../credentials/flow.js'
// A type only: the passkey ceremony's functions come from the WebAuthn module, which is loaded
// only when a passkey provider is configured (a credentials-only app never bundles it at start).
import type { WebAuthnConfig } from '../webauthn/flow.js'
import { flowModule } from '../kinds.js'
import { actionLabelOf } from './policy.js'
import type { AdapterAuthenticator } from '../../adapters.js'

export { REAUTHENTICATE }

/** Wrong proofs one re-authentication gets before it is void (the user's own limits apply too). */
export const MAX_REAUTH_ATTEMPTS = 5

const attemptsKey = (challenge: string) => `reauth:attempts:${challenge}`
const sendsKey = (challenge: string) => `reauth:sends:${challenge}`
const emailCodeKey = (challenge: string) => `reauth:email:${challenge}`
const emailCodeHash = async (code: string, challenge: string) => sha256Hex(`authchart-reauth\u0000${challenge}\u0000${code}`)

/** Codes one re-authentication may send, and how long one is good for (seconds). */
export const MAX_EMAIL_SENDS = 3
export const EMAIL_CODE_MAX_AGE = 600

/** The e-mail provider codes are sent with, if one is configured. */
export function emailProvider(ctx: RequestContext): { config: EmailConfig; settings: ResolvedEmailProvider } | undefined {
  const provider = ctx.config.providers.find((p) => p.type === 'email' && p.email)
  return provider ? { config: provider.config as unknown as EmailConfig, settings: provider.email! } : undefined
}

/** The mailer's error without the code (a custom sender may quote its input). */
function redactedSendError(error: unknown, code: string): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split(code).join('[code]')
}

/**
 * Names a session without carrying its value: a database session by its id, a JWT session by its
 * user and sign-in time (kept across reissues). A different session of the same user, or the same
 * browser signed in anew, is a different key.
 */
export async function sessionKeyOf(current: CurrentSession): Promise<string> {
  if (current.strategy === 'database') return `db:${await sessionId(current.value)}`
  return `jwt:${(await sha256Hex(`${current.user.id}\u0000${current.signedInAt ?? ''}`)).slice(0, 32)}`
}

/** The credentials provider a password is checked with, if one is configured. */
export function passwordProvider(ctx: RequestContext): { id: string; config: CredentialsConfig } | undefined {
  const provider = ctx.config.providers.find((p) => p.type === 'credentials')
  return provider ? { id: provider.id, config: provider.config as unknown as CredentialsConfig } : undefined
}

/** The passkey provider assertions are checked with, if one is configured (and the adapter keeps passkeys). */
export function passkeyProvider(ctx: RequestContext): WebAuthnConfig | undefined {
  const provider = ctx.config.providers.find((p) => p.type === 'webauthn')
  return provider && typeof ctx.config.adapter?.listAuthenticatorsByUserId === 'function'
    ? (provider.config as unknown as WebAuthnConfig)
    : undefined
}

/** Whether `userId` has a passkey of `provider` to answer with. */
async function hasPasskey(ctx: RequestContext, userId: string): Promise<boolean> {
  return (await ctx.config.adapter!.listAuthenticatorsByUserId!(userId)).length > 0
}

/** The `providerAccountId`s of `userId`'s accounts, by provider (none without an adapter that lists them). */
async function accountIdsOf(ctx: RequestContext, userId: string): Promise<Map<string, string[]>> {
  const byProvider = new Map<string, string[]>()
  const adapter = ctx.config.adapter
  if (typeof adapter?.listAccounts !== 'function') return byProvider
  for (const account of await adapter.listAccounts(userId)) {
    byProvider.set(account.provider, [...(byProvider.get(account.provider) ?? []), String(account.providerAccountId)])
  }
  return byProvider
}

/** The OpenID providers `userId` can log in at again (see {@link federatedProviders}). */
async function providersOf(ctx: RequestContext, userId: string): Promise<FederatedProvider[]> {
  if (!ctx.config.providers.some((provider) => provider.type === 'oidc')) return []
  return federatedProviders(ctx, new Set((await accountIdsOf(ctx, userId)).keys()))
}

/**
 * The address the adapter stores for `userId`, the only one a code may go to; `null` without an
 * adapter that reads users, or a record with no address.
 */
export async function storedAddressOf(ctx: RequestContext, userId: string): Promise<string | null> {
  const getUser = ctx.config.adapter?.getUser
  if (typeof getUser !== 'function') return null
  const email = (await getUser.call(ctx.config.adapter, userId))?.email
  return typeof email === 'string' && email !== '' ? email : null
}

/**
 * Whether the session's user has a password to prove: a credentials provider is configured and
 * the adapter links a `credentials` account to the user (every credentials sign-in of a database
 * session links one). Where the adapter cannot tell, as before: without an adapter that lists
 * accounts, and under JWT sessions (whose credentials sign-in stores nothing) for a user the
 * adapter has no record of, or one this session proved a password for.
 */
export async function hasPassword(ctx: RequestContext, current: CurrentSession): Promise<boolean> {
  if (!passwordProvider(ctx)) return false
  const adapter = ctx.config.adapter
  if (typeof adapter?.listAccounts !== 'function') return true
  const accounts = await adapter.listAccounts(current.user.id)
  // Auth.js's account type leaves it out; a database session's credentials sign-in stores one.
  if (accounts.some((account) => (account.type as string) === 'credentials')) return true
  if (current.strategy === 'database') return false
  if (factorTimesOf(current).pwd !== undefined) return true
  return typeof adapter.getUser === 'function' && (await adapter.getUser(current.user.id)) === null
}

/** The factors the session's user can prove here, in the order of `accepted` (strongest first), and the providers for `fed`. */
async function provableFactors(
  ctx: RequestContext,
  current: CurrentSession,
  accepted: readonly string[],
): Promise<{ factors: ReauthFactor[]; providers: FederatedProvider[] }> {
  const userId = current.user.id
  const available = new Set<ReauthFactor>()
  if (accepted.includes('pwd') && (await hasPassword(ctx, current))) available.add('pwd')
  // A code is checked by the second-factor module only: without it, no code is a proof here.
  if (ctx.config.secondFactor && (await enrolledFactors(ctx.config.adapter, userId)).length > 0) available.add('otp')
  // The token's `email` is a claim a `jwt` callback may have merged from update(): never a factor.
  if (emailProvider(ctx) && accepted.includes('email') && (await storedAddressOf(ctx, userId))) available.add('email')
  if (accepted.includes('hwk') && passkeyProvider(ctx) && (await hasPasskey(ctx, userId))) available.add('hwk')
  const providers = accepted.includes('fed') ? await providersOf(ctx, userId) : []
  if (providers.length > 0) available.add('fed')
  return { factors: accepted.filter((factor): factor is ReauthFactor => available.has(factor as ReauthFactor)), providers }
}

/** A configured OpenID provider the user may log in at again, by id. */
function federatedProvider(ctx: RequestContext, providerId: string) {
  const provider = ctx.config.providerById.get(providerId)
  if (provider?.type !== 'oidc' || !provider.oauth) throw new TypeError(`provider "${providerId}" is no longer an OpenID provider here`)
  return provider
}

/** The output of an OAuth sign-in effect's `done` event, or `undefined` when it failed. */
function doneOutput<T>(event: EventObject, name: string): T | undefined {
  return event.type === `${name}.done` ? ((event as EventObject & { output: T }).output) : undefined
}

/** An effect implementation of the OAuth sign-in, run for this re-authentication. */
type OAuthEffect = (context: unknown, ctx: RequestContext, trigger: EventObject) => EventObject | Promise<EventObject>
const oauthEffect = (name: 'createAuthorizationRequest' | 'validateCallback' | 'exchangeCode') =>
  flowModule('oauth').oauthEffects[name] as unknown as OAuthEffect

/** A provider's answer that proves nothing for this re-authentication: refused, the flow ends. */
function refusedAnswer(ctx: RequestContext, reason: string) {
  ctx.logger.warn('reauthentication-failed')
  ctx.logger.debug('re-authentication refused', { reason })
  return fail('refused', { error: 'AccessDenied' })
}

/** The live session, when it is still the one that started this flow; else `null` (logged). */
async function sameSession(ctx: RequestContext, context: ReauthenticateContext): Promise<CurrentSession | null> {
  const current = await currentSession(ctx)
  if (current && current.user.id === context.userId && (await sessionKeyOf(current)) === context.sessionKey) return current
  ctx.logger.debug('re-authentication refused', { reason: current ? 'another session or user' : 'signed out' })
  return null
}

const signedOut = () => fail('signedOut', { error: 'AccessDenied' })

/** Counts a proof against this re-authentication before it is checked: the how-manieth it is. */
async function countProof(ctx: RequestContext, challenge: string): Promise<number> {
  return ctx.config.store.increment(attemptsKey(challenge), ENVELOPE_MAX_AGE)
}

/** A wrong proof: back to the page while tries remain, void on the last one. */
function wrongProof(ctx: RequestContext, attempt: number) {
  ctx.logger.warn('reauthentication-failed')
  return attempt >= MAX_REAUTH_ATTEMPTS ? fail('exhausted', { error: 'AccessDenied' }) : fail('wrong')
}

const exhausted = () => fail('exhausted', { error: 'AccessDenied' })

type Env = FlowContext

type ReauthenticateMachine = typeof reauthenticateMachine

/** The re-authentication's effects, for its chart (built on the first re-authentication). */
const reauthenticateEffectsOf = (machine: CompiledChart<ReauthenticateContext>) => effects<ReauthenticateMachine, Env>(machine as never, {
  async findFactors(context, ctx) {
    const current = await currentSession(ctx)
    if (!current) return signedOut()
    const { factors, providers } = await provableFactors(ctx, current, context.policy.factors)
    if (factors.length === 0) {
      ctx.logger.warn('reauthentication-unavailable')
      return fail('noFactor', { error: 'AccessDenied' })
    }
    return { userId: current.user.id, sessionKey: await sessionKeyOf(current), factors, challenge: newChallenge(), providers }
  },

  async verifyPassword(context, ctx, trigger) {
    if (!(await sameSession(ctx, context))) return signedOut()
    const provider = passwordProvider(ctx)!
    const { type: _type, at: _at, ...submitted } = trigger as Record<string, unknown>
    const credentials = Object.fromEntries(Object.entries(submitted).filter(([, value]) => typeof value === 'string'))
    // The credentials sign-in's limits, under the same keys: a re-authentication is no way around them.
    const limits = ctx.config.rateLimit.credentials
    if (limits) {
      const identifier = attemptIdentifier(provider.config, credentials)
      const address = ctx.clientAddress
      const subjects: LimitedSubject[] = [
        ...(identifier !== undefined ? [{ kind: 'identifier', value: identifier, limit: limits.perIdentifier }] : []),
        ...(address ? [{ kind: 'address', value: addressBucket(address), limit: limits.perAddress }] : []),
      ]
      const admission = await admitAttempt(ctx.config.store, `credentials:${provider.id}`, ctx.config.secrets[0], subjects, ctx.logger)
      if (!admission.allowed) {
        ctx.logger.warn('credentials-rate-limited')
        return fail('limited', { error: 'CredentialsSignin', code: 'rate_limited', retryAfter: admission.retryAfter })
      }
    }
    const attempt = await countProof(ctx, context.challenge!)
    if (attempt > MAX_REAUTH_ATTEMPTS) return exhausted()
    let user: { id?: unknown; email?: unknown } | null | undefined
    try {
      user = (await provider.config.authorize(credentials, ctx.raw)) as { id?: unknown; email?: unknown } | null | undefined
    } catch (error) {
      if (!(error instanceof CredentialsSignin)) throw error
      user = null
    }
    if (!user) return wrongProof(ctx, attempt)
    if (!(await isSignedInUser(ctx, provider.id, user, context.userId!))) {
      // Someone else's password proves nothing about this session's user.
      ctx.logger.warn('reauthentication-other-user')
      return wrongProof(ctx, attempt)
    }
    return { factor: 'pwd' as const }
  },

  async verifyCode(context, ctx, trigger) {
    if (!(await sameSession(ctx, context))) return signedOut()
    const attempt = await countProof(ctx, context.challenge!)
    if (attempt > MAX_REAUTH_ATTEMPTS) return exhausted()
    const secondFactor = ctx.config.secondFactor
    if (!secondFactor) return fail('exhausted', { error: 'AccessDenied' })
    const checked = await secondFactor.checkCode({
      adapter: ctx.config.adapter!,
      store: ctx.config.store,
      secrets: ctx.config.secrets,
      userId: context.userId!,
      challenge: `reauth:${context.challenge}`,
      code: String((trigger as { code?: unknown }).code ?? ''),
      at: ctx.at,
    })
    if (checked.ok) return { factor: 'otp' as const }
    // Locked (this minute's check of a user out of tries is taken): as wrong, the page asks again.
    if (checked.reason === 'locked') return fail('wrong')
    if (checked.reason === 'exhausted') {
      ctx.logger.warn('second-factor-attempts-exhausted')
      return fail('exhausted', { error: 'AccessDenied' })
    }
    return wrongProof(ctx, attempt)
  },

  async sendEmailCode(context, ctx) {
    if (!(await sameSession(ctx, context))) return signedOut()
    const to = await storedAddressOf(ctx, context.userId!)
    if (!to) return fail('notSent')
    // A few messages per re-authentication: the page cannot be made to mail the user in a loop.
    if ((await ctx.config.store.increment(sendsKey(context.challenge!), ENVELOPE_MAX_AGE)) > MAX_EMAIL_SENDS) {
      ctx.logger.warn('email-send-throttled')
      return fail('notSent', { code: 'throttled' })
    }
    const provider = emailProvider(ctx)!
    // The address's own limit, shared with every other message we send it (the sign-in's too).
    if (!(await admitMessageTo(ctx, to, REAUTHENTICATE, recipientLimitOf(provider.settings))).admitted) return fail('notSent', { code: 'throttled' })
    const settings = provider.settings.code
    const code = generateCode(settings?.length ?? 8, settings?.alphabet ?? 'digits')
    const expires = ctx.at + EMAIL_CODE_MAX_AGE
    await ctx.config.store.put(emailCodeKey(context.challenge!), await emailCodeHash(code, context.challenge!), EMAIL_CODE_MAX_AGE)
    try {
      await provider.config.sendVerificationRequest({
        // The address the adapter stores, never one the request or the token names.
        identifier: to,
        // The message's link leads back to this page; it signs no one in (no token is stored).
        url: `${ctx.authUrl}/step/${REAUTHENTICATE}`,
        token: generateToken(),
        code,
        // The message names the action this code confirms: it is not a sign-in.
        confirming: actionLabelOf(context.action, context.intent.fields),
        expires: new Date(expires * 1000),
        provider: provider.config,
        theme: ctx.config.theme,
        request: ctx.raw,
      })
    } catch (error) {
      await ctx.config.store.reset(emailCodeKey(context.challenge!))
      ctx.logger.error(new EmailSignInError(redactedSendError(error, code)))
      return fail('notSent')
    }
    return null
  },

  async verifyEmailCode(context, ctx, trigger) {
    if (!(await sameSession(ctx, context))) return signedOut()
    const attempt = await countProof(ctx, context.challenge!)
    if (attempt > MAX_REAUTH_ATTEMPTS) return exhausted()
    const key = emailCodeKey(context.challenge!)
    const expected = await ctx.config.store.get(key)
    const typed = String((trigger as { code?: unknown }).code ?? '').trim().toUpperCase()
    if (expected === null || !timingSafeEqual(expected, await emailCodeHash(typed, context.challenge!))) return wrongProof(ctx, attempt)
    // Spent: the same code cannot prove anything again.
    await ctx.config.store.reset(key)
    return { factor: 'email' as const }
  },

  async createPasskeyOptions(context, ctx) {
    if (!(await sameSession(ctx, context))) return signedOut()
    // Only this user's passkeys are allowed: the browser offers none of another account's.
    const options = await flowModule('webauthn').passkeyRequestOptions(ctx, passkeyProvider(ctx)!, context.userId)
    return { options: { ...options }, challenge: options.challenge }
  },

  async verifyPasskey(context, ctx, trigger) {
    if (!(await sameSession(ctx, context))) return signedOut()
    const attempt = await countProof(ctx, context.challenge!)
    if (attempt > MAX_REAUTH_ATTEMPTS) return exhausted()
    const provider = passkeyProvider(ctx)!
    const challenge = context.passkeyChallenge!
    // Single use, as at sign-in: a replayed assertion meets a spent challenge.
    if (!(await flowModule('webauthn').spendWebAuthnChallenge(ctx, challenge))) return wrongProof(ctx, attempt)
    const response = String((trigger as { response?: unknown }).response ?? '')
    const found = await flowModule('webauthn').findAssertedAuthenticator(ctx, provider, response)
    if (isFailure(found)) return wrongProof(ctx, attempt)
    const stored = found.authenticator as unknown as AdapterAuthenticator
    if (stored.userId !== context.userId) {
      // Another user's passkey proves nothing about this session's user; its counter stays.
      ctx.logger.warn('reauthentication-other-user')
      return wrongProof(ctx, attempt)
    }
    const verified = await flowModule('webauthn').verifyPasskeyAssertion(ctx, provider, response, challenge, stored)
    if (isFailure(verified)) return wrongProof(ctx, attempt)
    await flowModule('webauthn').updatePasskeyCounter(ctx, stored, verified.newCounter)
    return { factor: 'hwk' as const }
  },

  async createAuthorizationRequest(context, ctx, trigger) {
    if (!(await sameSession(ctx, context))) return signedOut()
    const provider = federatedProvider(ctx, String((trigger as { provider?: unknown }).provider))
    // The sign-in's own request, with every check and `prompt=login`, `max_age=0`; its secrets
    // are sealed in this flow, not in a sign-in flow.
    const answer = await oauthEffect('createAuthorizationRequest')(signInContextOf(provider.id, null), atProvider(ctx, provider), trigger)
    const request = doneOutput<Omit<Federation, 'providerId' | 'requestedAt'>>(answer, 'createAuthorizationRequest')
    if (!request?.state) return fail('threw')
    return { ...request, state: request.state, providerId: provider.id, requestedAt: ctx.at }
  },

  async verifyFederated(context, ctx, trigger) {
    if (!(await sameSession(ctx, context))) return signedOut()
    const attempt = await countProof(ctx, context.challenge!)
    if (attempt > MAX_REAUTH_ATTEMPTS) return exhausted()
    const federation = context.federation!
    const provider = federatedProvider(ctx, federation.providerId)
    const params = (trigger as { params?: Record<string, string> }).params ?? {}
    const signIn = signInContextOf(provider.id, federation, params)
    const at = atProvider(ctx, provider)
    // The sign-in's checks, as they are: state and `iss` of the answer, then the code exchange
    // with PKCE, and the ID token's signature, issuer, audience, lifetime and nonce.
    const validated = await oauthEffect('validateCallback')(signIn, at, trigger)
    if (validated.type !== 'validateCallback.done') {
      // The user turned the provider down (or it failed): back to the page, counted.
      if ((validated as { reason?: string }).reason === 'providerError') return wrongProof(ctx, attempt)
      return refusedAnswer(ctx, 'invalid callback')
    }
    const exchanged = doneOutput<{ tokens: { id_token?: unknown } }>(await oauthEffect('exchangeCode')(signIn, at, trigger), 'exchangeCode')
    const idToken = exchanged?.tokens.id_token
    if (typeof idToken !== 'string') return refusedAnswer(ctx, 'no verified ID token')
    const accountIds = (await accountIdsOf(ctx, context.userId!)).get(provider.id) ?? []
    const verdict = federatedVerdict(decodeJwt(idToken), federation.requestedAt, accountIds)
    if (verdict === 'otherAccount') ctx.logger.warn('reauthentication-other-user')
    if (verdict !== 'proven') return refusedAnswer(ctx, verdict)
    return { factor: 'fed' as const }
  },

  async markVerified(context, ctx) {
    const current = await sameSession(ctx, context)
    if (!current) return fail('sessionChanged', { error: 'AccessDenied' })
    const verified = withFactorVerified(factorTimesOf(current), context.proven!, ctx.at)
    if (current.strategy === 'database') {
      await ctx.config.adapter!.updateSession!({ sessionToken: current.value, fva: verified } as never)
      await refreshCachedSessionAfterProof(ctx, current.value)
      return { session: null }
    }
    // The same token, claims kept (subject, sign-in time, provider session), with the new time.
    const value = await encodeSessionToken(ctx, { ...current.token, [FACTOR_VERIFICATION_CLAIM]: verified })
    return { session: { op: 'set' as const, value, expires: ctx.at + ctx.config.session.maxAge } }
  },
})

/**
 * Whether the user `authorize` returned is the signed-in user: its id is the subject itself for
 * JWT sessions; for database sessions the user its credentials account is linked to, the account
 * named as the sign-in names it (the id `authorize` returned, else the e-mail address).
 */
async function isSignedInUser(
  ctx: RequestContext,
  providerId: string,
  returned: { id?: unknown; email?: unknown },
  userId: string,
): Promise<boolean> {
  const returnedId = returned.id === undefined || returned.id === null ? '' : String(returned.id)
  if (ctx.config.session.strategy === 'jwt') return returnedId !== '' && returnedId === userId
  const accountId = returnedId !== '' ? returnedId : typeof returned.email === 'string' ? returned.email : ''
  if (accountId === '') return false
  const linked = await ctx.config.adapter?.getUserByAccount?.({ provider: providerId, providerAccountId: accountId })
  if (linked) return String(linked.id) === userId
  return returnedId !== '' && returnedId === userId
}

/** The answers to the page that carry a proof: a second post of one is counted like a wrong one. */
const PROOFS: ReadonlySet<string> = new Set(['reauth.password', 'reauth.code', 'reauth.emailCode', 'reauth.passkey'])

/**
 * The answer to a second post of the same page (its sealed flow spent, or a copy of it): refused
 * as the flow refuses, `AccessDenied`, never resumed. A proof it carries counts against the
 * re-authentication's attempts and, a one-time code, against the user's code limits, as a wrong
 * one would: a copied page is no way to more guesses.
 */
export async function refusedReauthentication(ctx: RequestContext, error: Error): Promise<Error> {
  const event = ctx.request.body?.event
  const cookieName = flowCookieName(ctx, REAUTHENTICATE)
  const sealed = ctx.request.cookies[cookieName]
  if (typeof event === 'string' && PROOFS.has(event) && sealed) {
    let context: ReauthenticateContext | undefined
    try {
      const options = { ...sealingFor(ctx, cookieName, undefined), peek: true }
      context = (await openEnvelope(reauthenticateFlow as never, sealed, options)).context as ReauthenticateContext
    } catch {
      // Forged, expired or of another version: there is nothing of ours to count against.
    }
    if (context?.challenge) await countProof(ctx, context.challenge)
    if (context?.userId && event === 'reauth.code') {
      await ctx.config.store.increment(userAttemptsKey(context.userId), USER_ATTEMPT_WINDOW)
    }
  }
  ctx.logger.warn('reauthentication-failed')
  ctx.logger.debug('re-authentication refused', { reason: error.message })
  return new AccessDenied(`The re-authentication could not be resumed: ${error.message}`)
}

/** The re-authentication flow definition; its chart is built when the engine first reads it. */
export const reauthenticateFlow = deferredFlow(() => {
  return defineFlow<ReauthenticateMachine, RequestContext>({
    chart: reauthenticateChart as never,
    context: ReauthenticateContext,
    // The browser has the passkey options and the provider's URL: neither is needed again.
    sealed: (context) => ({
      ...context,
      passkeyOptions: null,
      ...(context.federation ? { federation: { ...context.federation, url: '' } } : {}),
    }),
    // Version 3 added the passkey's states and optional fields, 4 the provider's: a flow sealed by
    // 2 or 3 goes on as it was.
    migrations: { '2': (sealed) => sealed, '3': (sealed) => sealed },
    effects: adapterView(reauthenticateEffectsOf(reauthenticateChart)),
  }) as never
})

/**
 * The re-authentication waiting for this answer at the provider's registered callback, if any:
 * the flow sealed in this browser's cookie, resting at the provider named by the path, whose
 * sealed `state` is the one the answer carries. Nothing in the query says it is a
 * re-authentication; a callback that matches no waiting one goes on as the sign-in's callback
 * (whose own sealed flow and state it must then match).
 */
export async function waitingReauthentication(
  ctx: RequestContext,
  params: Record<string, string>,
): Promise<FlowBinding<Record<string, string>> | undefined> {
  const cookieName = flowCookieName(ctx, REAUTHENTICATE)
  const sealed = ctx.request.cookies[cookieName]
  if (!sealed || typeof params.state !== 'string' || !ctx.provider) return undefined
  let context: ReauthenticateContext
  try {
    const snapshot = await openEnvelope(reauthenticateFlow as never, sealed, { ...sealingFor(ctx, cookieName, undefined), peek: true })
    if (!snapshot.matches('awaitingProvider')) return undefined
    context = snapshot.context as ReauthenticateContext
  } catch {
    return undefined
  }
  const federation = context.federation
  if (federation?.providerId !== ctx.provider.id || !timingSafeEqual(federation.state, params.state)) return undefined
  return {
    flow: reauthenticateFlow as unknown as FlowBinding['flow'],
    params: StringParams,
    resumes: true,
    // A copy of the spent flow (a replayed callback) is refused and counted, like a copied page.
    refused: async (refusedCtx, error) => {
      if (context.challenge) await countProof(refusedCtx, context.challenge)
      return refusedReauthentication(refusedCtx, error)
    },
    toEvent: (eventCtx, callbackParams) => ({ type: 'reauth.callback', at: eventCtx.at, params: callbackParams }),
  }
}
