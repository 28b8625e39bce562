/**
 * The enrolment chart on its own: a confirmation refused because the session ended, or because a
 * factor was enrolled meanwhile, never reaches the state that shows backup codes, and the secret
 * does not outlive the refusal.
 */
import { describe, expect, it } from 'vitest'
import { createActor, type SnapshotFrom } from 'xstate'
import { totpEnrolmentMachine } from '../../machines/totp-enrolment.machine.js'

type Snapshot = SnapshotFrom<typeof totpEnrolmentMachine>

/** The chart waiting for the confirming code, then sent `events`. */
function afterConfirming(...events: Parameters<ReturnType<typeof createActor<typeof totpEnrolmentMachine>>['send']>[0][]): Snapshot {
  const actor = createActor(totpEnrolmentMachine).start()
  actor.send({ type: 'enrolment.start', callbackUrl: 'https://app.test/account', at: 1 })
  actor.send({ type: 'checkFreshness.done', output: null, at: 1 })
  actor.send({ type: 'createTotpSecret.done', output: { userId: 'u-1', secret: 'JBSWY3DPEHPK3PXP', challenge: 'c' }, at: 1 })
  actor.send({ type: 'enrolment.confirm', code: '123456', at: 2 })
  for (const event of events) actor.send(event)
  return actor.getSnapshot()
}

describe('a refused confirmation', () => {
  it('from a session that ended ends in the error page, with the secret forgotten', () => {
    const snapshot = afterConfirming({ type: 'confirmTotp.failed', reason: 'signedOut', error: 'AccessDenied', at: 2 })
    expect(snapshot.value).toBe('failed')
    expect(snapshot.context.secret).toBeNull()
    expect(snapshot.context.codes).toBeNull()
    expect(snapshot.output).toEqual({ type: 'error', error: 'AccessDenied' })
  })

  it('after another enrolment goes back where the user came from, showing no codes', () => {
    const snapshot = afterConfirming({ type: 'confirmTotp.failed', reason: 'alreadyEnrolled', at: 2 })
    expect(snapshot.value).toBe('alreadyEnrolled')
    expect(snapshot.context.codes).toBeNull()
    expect(snapshot.output).toEqual({ type: 'redirect', url: 'https://app.test/account' })
  })

  it('for a wrong code waits for another one', () => {
    const snapshot = afterConfirming({ type: 'confirmTotp.failed', reason: 'wrongCode', at: 2 })
    expect(snapshot.value).toBe('awaitingConfirmation')
    expect(snapshot.context.stepError).toBe('InvalidCode')
  })
})

describe('the freshness gate', () => {
  it('hands a stale session to the re-authentication before any secret is created', () => {
    const actor = createActor(totpEnrolmentMachine).start()
    actor.send({ type: 'enrolment.start', callbackUrl: 'https://app.test/account', at: 1 })
    expect(actor.getSnapshot().value).toBe('checkingFreshness')
    actor.send({ type: 'checkFreshness.failed', reason: 'stale', at: 1 })
    const snapshot = actor.getSnapshot()
    expect(snapshot.value).toBe('reauthenticationRequired')
    expect(snapshot.context.secret).toBeNull()
    expect(snapshot.output).toEqual({ type: 'stepUp', action: 'enrol-second-factor' })
  })
})
