/**
 * The TOTP enrolment flow: the machine and its effects. The secret lives only in the sealed flow
 * until the user proves their app has it; then it is stored encrypted, with backup codes stored as
 * keyed hashes and shown once.
 *
 * @module
 */
import type { totpEnrolmentMachine } from '../../../machines/totp-enrolment.machine.js'
import { totpEnrolmentChart } from '../../charts/totp-enrolment.js'
import { TotpEnrolmentContext } from '../../../machines/totp-enrolment.logic.js'
import { defineCompiledFlow } from '../../engine/compiled-flow.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import type { AdapterView } from '../../shapes.js'
import {
  BACKUP_CODE_COUNT,
  createBackupCodes,
  enrolledFactors,
  hashBackupCode,
  loadTotp,
  MAX_CODE_ATTEMPTS,
  newChallenge,
  sealFactorSecret,
  totpStepKey,
  TOTP_STEP_CLAIM_SECONDS,
  USER_ATTEMPT_WINDOW,
} from '../../second-factor/index.js'
import { signedInUser } from '../../session/current.js'
import { effects, fail } from '../effect.js'
import { adapterView } from '../module.js'
import { stepUpDemand } from '../reauthenticate/gate.js'

/** The adapter methods turning on a second factor needs. */
export const SECOND_FACTOR_METHODS = ['listSecondFactors', 'createSecondFactor', 'updateSecondFactor', 'deleteSecondFactor'] as const

/**
 * The id of a user's TOTP factor: one per user, so that of two enrolments confirmed at the same
 * moment the adapter stores only the first (its primary key refuses the second).
 */
const enrolledFactorId = (userId: string) => `totp:${userId}`
/** The backup codes of an enrolment belong to its factor. */
const backupCodesId = (factorId: string) => `${factorId}:backup-codes`

const alreadyEnrolled = (ctx: RequestContext) => {
  ctx.logger.debug('second-factor enrolment refused', { reason: 'a second factor is already enrolled' })
  return fail('alreadyEnrolled')
}

/**
 * The adapter with the second-factor methods. They are optional (no adapter without them has a
 * user with a second factor), so they are checked here, when a user turns it on.
 *
 * @throws {TypeError} when the adapter lacks one (the Configuration error, reason logged).
 */
function requireFactorStore({ adapter }: RequestContext): AdapterView<(typeof SECOND_FACTOR_METHODS)[number]> {
  // Stryker disable next-line OptionalChaining: eq#totp-enrolment-adapter
  const missing = SECOND_FACTOR_METHODS.filter((method) => typeof adapter?.[method] !== 'function')
  if (missing.length > 0) {
    throw new TypeError(`two-step verification needs an adapter with ${missing.join(', ')}`)
  }
  return adapter as AdapterView<(typeof SECOND_FACTOR_METHODS)[number]>
}

/**
 * What the enrolment page shows: the key, and the `otpauth://` URI and QR code rendered from it now
 * (only the secret is sealed: the QR code alone would push the flow cookie past 4,096 bytes). `null`
 * when the request is not signed in as the enrolling user: the key is shown to them only.
 */
export async function enrolmentPageData(
  ctx: RequestContext,
  context: TotpEnrolmentContext,
): Promise<{ secret: string; uri: string; qr: string } | null> {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: eq#totp-enrolment-waiting
  if (!context.secret || !context.userId) return null
  const user = await signedInUser(ctx)
  if (!user || user.id !== context.userId) return null
  const { uri, qr } = await (await loadTotp()).totpEnrolment(context.secret, user.email ?? user.name ?? user.id, ctx.config.secondFactor?.issuer ?? ctx.request.url.host)
  return { secret: context.secret, uri, qr }
}

/**
 * The context the enrolment's effects receive. The second-factor methods are optional adapter
 * methods (an adapter without them has no user with a second factor): checked when a user turns
 * it on, not at load.
 */
type Env = FlowContext

/** The TOTP enrolment's effects. */
export const totpEnrolmentEffects = effects<typeof totpEnrolmentMachine, Env>(totpEnrolmentChart, {
  async checkFreshness(_context, ctx) {
    if (await stepUpDemand(ctx, 'enrol-second-factor')) {
      return fail('stale')
    }
    return null
  },

  async createTotpSecret(_context, ctx) {
    const adapter = requireFactorStore(ctx)
    const user = await signedInUser(ctx)
    // Stryker disable next-line ConditionalExpression,StringLiteral,ObjectLiteral: eq#totp-enrolment-signed-in
    if (!user) return fail('signedOut', { error: 'AccessDenied' })
    // Any factor, backup codes included: they belong to an enrolment and are not replaced.
    if ((await enrolledFactors(adapter, user.id)).length > 0) return fail('alreadyEnrolled')
    const { createTotpSecret } = await loadTotp()
    return { userId: user.id, secret: createTotpSecret(), challenge: newChallenge() }
  },

  async confirmTotp(context, ctx, trigger) {
    const adapter = requireFactorStore(ctx)
    const userId = context.userId!
    // The session that started the enrolment may have ended since (signed out, signed out
    // everywhere, expired) or the browser may now be someone else's: only a live session of
    // the enrolling user confirms it.
    const user = await signedInUser(ctx)
    if (!user || user.id !== userId) {
      ctx.logger.debug('second-factor enrolment refused', { reason: 'not signed in as the enrolling user' })
      // Stryker disable next-line StringLiteral: eq#totp-enrolment-reason
      return fail('signedOut', { error: 'AccessDenied' })
    }
    // Counted before it is checked, on the server: a replayed flow cookie gets no new tries.
    const attempt = await ctx.config.store.increment(`2fa:enrol:${context.challenge}`, USER_ATTEMPT_WINDOW)
    // Stryker disable next-line StringLiteral: eq#totp-enrolment-code-field
    const code = String((trigger as { code?: unknown }).code ?? '').trim()
    const step = attempt <= MAX_CODE_ATTEMPTS ? (await loadTotp()).totpStep(context.secret!, code, ctx.at) : null
    if (step === null) {
      if (attempt < MAX_CODE_ATTEMPTS) return fail('wrongCode')
      ctx.logger.warn('second-factor-attempts-exhausted')
      // Stryker disable next-line StringLiteral: eq#totp-enrolment-reason
      return fail('exhausted', { error: 'AccessDenied' })
    }
    // A factor enrolled since this enrolment started (the owner's, when this is a thief's) wins:
    // one enrolment per user, and its backup codes are never replaced by another's.
    if ((await enrolledFactors(adapter, userId)).length > 0) return alreadyEnrolled(ctx)
    const factorId = enrolledFactorId(userId)
    // The confirming code is spent: it cannot also sign in (the gate claims the same key).
    await ctx.config.store.claim(totpStepKey(factorId, step), TOTP_STEP_CLAIM_SECONDS)
    const createdAt = new Date(ctx.at * 1000)
    try {
      await adapter.createSecondFactor({
        id: factorId,
        userId,
        type: 'totp',
        secret: await sealFactorSecret(context.secret!, ctx.config.secrets),
        createdAt,
      })
    } catch (error) {
      // The id is the user's: of two enrolments confirmed at once, the store keeps the first.
      if ((await enrolledFactors(adapter, userId)).some((factor) => factor.id === factorId)) return alreadyEnrolled(ctx)
      throw error
    }
    const codes = createBackupCodes(BACKUP_CODE_COUNT)
    const hashes = await Promise.all(codes.map((code) => hashBackupCode(code, ctx.config.secrets[0])))
    await adapter.createSecondFactor({ id: backupCodesId(factorId), userId, type: 'backup-codes', secret: hashes.join(' '), createdAt })
    return { codes }
  },
})

/** The TOTP enrolment flow definition. */
export const totpEnrolmentFlow = defineCompiledFlow<typeof totpEnrolmentMachine, RequestContext>({
  chart: totpEnrolmentChart,
  context: TotpEnrolmentContext,
  effects: adapterView(totpEnrolmentEffects),
})
