/**
 * The TOTP enrolment flow: the machine and its effects. The secret lives only in the sealed flow
 * until the user proves their app has it; then it is stored encrypted, with backup codes stored as
 * keyed hashes and shown once.
 *
 * @module
 */
import { TotpEnrolmentContext, totpEnrolmentMachine } from '../../machines/totp-enrolment.machine.js'
import { defineFlow } from '../engine/flow.js'
import type { FlowContext, RequestContext } from '../config/types.js'
import type { AdapterView } from '../shapes.js'
import {
  BACKUP_CODE_COUNT,
  createBackupCodes,
  createTotpSecret,
  enrolledFactors,
  hashBackupCode,
  MAX_CODE_ATTEMPTS,
  newChallenge,
  sealFactorSecret,
  totpEnrolment,
  totpStep,
  totpStepKey,
  TOTP_STEP_CLAIM_SECONDS,
  USER_ATTEMPT_WINDOW,
} from '../second-factor/index.js'
import { signedInUser } from '../session/current.js'
import { effects, fail } from './effect.js'
import { adapterView } from './module.js'

/** The adapter methods turning on a second factor needs. */
export const SECOND_FACTOR_METHODS = ['listSecondFactors', 'createSecondFactor', 'updateSecondFactor', 'deleteSecondFactor'] as const

/**
 * The adapter with the second-factor methods. They are optional (no adapter without them has a
 * user with a second factor), so they are checked here, when a user turns it on.
 *
 * @throws {TypeError} when the adapter lacks one (the Configuration error, reason logged).
 */
function requireFactorStore({ adapter }: Env): AdapterView<(typeof SECOND_FACTOR_METHODS)[number]> {
  const missing = SECOND_FACTOR_METHODS.filter((method) => typeof adapter?.[method] !== 'function')
  if (missing.length > 0) {
    throw new TypeError(`two-step verification needs an adapter with ${missing.join(', ')}`)
  }
  return adapter as AdapterView<(typeof SECOND_FACTOR_METHODS)[number]>
}

/**
 * The context the enrolment's effects receive. The second-factor methods are optional adapter
 * methods (an adapter without them has no user with a second factor): checked when a user turns
 * it on, not at load.
 */
type Env = FlowContext

/** The TOTP enrolment's effects. */
export const totpEnrolmentEffects = effects<typeof totpEnrolmentMachine, Env>(totpEnrolmentMachine, {
  async createTotpSecret(_context, ctx) {
    const adapter = requireFactorStore(ctx)
    const user = await signedInUser(ctx)
    if (!user) return fail('signedOut', { error: 'AccessDenied' })
    const factors = await enrolledFactors(adapter, user.id)
    if (factors.some((factor) => factor.type === 'totp')) return fail('alreadyEnrolled')
    const secret = createTotpSecret()
    const { uri, qr } = await totpEnrolment(secret, user.email ?? user.name ?? user.id, ctx.request.url.host)
    return { userId: user.id, secret, uri, qr, challenge: newChallenge() }
  },

  async confirmTotp(context, ctx, trigger) {
    const adapter = requireFactorStore(ctx)
    // Counted before it is checked, on the server: a replayed flow cookie gets no new tries.
    const attempt = await ctx.config.store.increment(`2fa:enrol:${context.challenge}`, USER_ATTEMPT_WINDOW)
    const code = String((trigger as { code?: unknown }).code ?? '').trim()
    const step = attempt <= MAX_CODE_ATTEMPTS ? totpStep(context.secret!, code, ctx.at) : null
    if (step === null) {
      if (attempt < MAX_CODE_ATTEMPTS) return fail('wrongCode')
      ctx.logger.warn('second-factor-attempts-exhausted')
      return fail('exhausted', { error: 'AccessDenied' })
    }
    const userId = context.userId!
    const factorId = crypto.randomUUID()
    // The confirming code is spent: it cannot also sign in (the gate claims the same key).
    await ctx.config.store.claim(totpStepKey(factorId, step), TOTP_STEP_CLAIM_SECONDS)
    const codes = createBackupCodes(BACKUP_CODE_COUNT)
    const hashes = await Promise.all(codes.map((code) => hashBackupCode(code, ctx.config.secrets[0])))
    for (const old of await enrolledFactors(adapter, userId)) {
      if (old.type === 'backup-codes') await adapter.deleteSecondFactor(old.id)
    }
    const createdAt = new Date(ctx.at * 1000)
    await adapter.createSecondFactor({
      id: factorId,
      userId,
      type: 'totp',
      secret: await sealFactorSecret(context.secret!, ctx.config.secrets),
      createdAt,
    })
    await adapter.createSecondFactor({ id: crypto.randomUUID(), userId, type: 'backup-codes', secret: hashes.join(' '), createdAt })
    return { codes }
  },
})

/** The TOTP enrolment flow definition. */
export const totpEnrolmentFlow = defineFlow<typeof totpEnrolmentMachine, RequestContext>({
  machine: totpEnrolmentMachine,
  context: TotpEnrolmentContext,
  effects: adapterView(totpEnrolmentEffects),
})
