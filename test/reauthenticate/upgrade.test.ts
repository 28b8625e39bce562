/**
 * A re-authentication in flight across a deploy: one sealed by the chart's previous versions (2:
 * no passkey states yet; 3: no provider states yet) is continued by this one, not refused with the
 * restart page.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { loadNotation } from '../../core/flows/loaded.js'
import { createMachine } from 'xstate'
import { openEnvelope, sealEnvelope } from '../../core/engine/envelope.js'
import { reauthenticateFlow } from '../../core/flows/reauthenticate/chart.js'
import { reauthenticateMachine } from '../../machines/reauthenticate.machine.js'
import { SECRET } from '../fixtures/http.js'

// The flow runs its compiled chart; the sealing below reads its notation too (an older version's machine beside it).
beforeAll(() => loadNotation(reauthenticateFlow))

const COOKIE = '__Secure-authchart.flow.reauthenticate'
const at = Math.floor(Date.now() / 1000)
const previousContext = {
  action: 'revoke-sessions',
  intent: { method: 'POST', url: '/auth/sessions', fields: { revoke: 'others' } },
  policy: { maxAge: 600, factors: ['hwk', 'otp', 'pwd', 'email', 'fed'] },
  userId: 'u-1',
  sessionKey: 'db:key',
  factors: ['pwd'],
  challenge: 'challenge',
  stepError: null,
  emailSent: false,
  proven: null,
  denial: null,
}

describe.each(['2', '3'])('a re-authentication sealed by chart version %s', (version) => {
  it('is continued by version 4, waiting for the same proof', async () => {
    expect(reauthenticateMachine.version).toBe('4')
    const previous = createMachine({ ...reauthenticateMachine.config, version }, reauthenticateMachine.implementations as never)
    const snapshot = previous.resolveState({ value: 'awaitingProof', context: previousContext as never })
    const sealed = await sealEnvelope({ ...reauthenticateFlow, machine: previous } as never, snapshot as never, { secrets: [SECRET], cookieName: COOKIE, at })
    const opened = await openEnvelope(reauthenticateFlow as never, sealed, { secrets: [SECRET], cookieName: COOKIE, at })
    expect(opened.value).toBe('awaitingProof')
    expect(opened.context).toMatchObject({ action: 'revoke-sessions', factors: ['pwd'], challenge: 'challenge' })
  })
})
