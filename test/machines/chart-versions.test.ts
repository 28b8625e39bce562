/**
 * Chart versions: a flow at rest is sealed with its chart's version and resumed only by the same
 * version (or through a migration the new version declares), so a chart that changes must change
 * its version, or flows in flight during a deploy would resume in a chart that no longer has their
 * state. Each built-in chart is compared with its committed fingerprint (states, transitions,
 * guards, actions and the sealed context's shape; see test/fixtures/chart-fingerprint.ts).
 *
 * After changing a chart: bump its `version` in machines/, add a migration to its flow if flows
 * resting in the old version can go on, then record the new fingerprint with
 * `UPDATE_CHART_FINGERPRINTS=1 npx vitest run test/machines/chart-versions.test.ts` (it refuses to
 * record a changed chart whose version did not change).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { object, optional, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { createMachine, type AnyStateMachine } from 'xstate'
import type { FlowDefinition } from '../../core/engine/flow.js'
import { credentialsSignInFlow } from '../../core/flows/credentials/flow.js'
import { emailSignInFlow } from '../../core/flows/email/flow.js'
import { logoutFlow } from '../../core/flows/logout/flow.js'
import { oauthSignInFlow } from '../../core/flows/oauth/flow.js'
import { sessionFlow } from '../../core/flows/session/flow.js'
import { signInCompletionFlow } from '../../core/flows/signin-completion/flow.js'
import { totpEnrolmentFlow } from '../../core/flows/totp-enrolment/flow.js'
import { webauthnSignInFlow } from '../../core/flows/webauthn/flow.js'
import { passwordSignInFlow } from '../../core/flows/password/signin.js'
import { passwordSignUpFlow } from '../../core/flows/password/signup.js'
import { passwordResetFlow } from '../../core/flows/password/reset.js'
import { passwordChangeFlow } from '../../core/flows/password/change.js'
import { reauthenticateFlow } from '../../core/flows/reauthenticate/chart.js'
import { organizationInvitationFlow } from '../../core/organizations/invitations.js'
import { deviceAuthorizationFlow } from '../../core/device-authorization/flow.js'
import { organizationMembershipFlow } from '../../core/organizations/members.js'
import { builtInMachines } from '../../visualizations/flows.js'
import { chartFingerprint } from '../fixtures/chart-fingerprint.js'

const FLOWS: readonly FlowDefinition<AnyStateMachine, never>[] = [
  sessionFlow,
  credentialsSignInFlow,
  oauthSignInFlow,
  emailSignInFlow,
  webauthnSignInFlow,
  passwordSignInFlow,
  passwordSignUpFlow,
  passwordResetFlow,
  passwordChangeFlow,
  signInCompletionFlow,
  totpEnrolmentFlow,
  logoutFlow,
  reauthenticateFlow,
  organizationInvitationFlow,
  deviceAuthorizationFlow,
  organizationMembershipFlow,
] as never
const FILE = new URL('./chart-fingerprints.json', import.meta.url)

interface Recorded {
  version: string
  fingerprint: string
}

let committed = JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, Recorded>
const current: Record<string, Recorded> = Object.fromEntries(
  FLOWS.map((flow) => [flow.machine.id, { version: flow.machine.version!, fingerprint: chartFingerprint(flow.machine, flow.context) }]),
)

if (process.env.UPDATE_CHART_FINGERPRINTS) {
  // Only charts whose version moved (or new charts): a changed chart with its old version stays failing.
  const updated = { ...committed }
  for (const [id, now] of Object.entries(current)) {
    if (committed[id]?.version !== now.version) updated[id] = now
  }
  writeFileSync(FILE, `${JSON.stringify(updated, null, 2)}\n`)
  committed = updated
}

describe('chart versions', () => {
  it('covers every built-in chart', () => {
    expect(FLOWS.map((flow) => flow.machine.id).sort()).toEqual(builtInMachines.map((machine) => machine.id).sort())
  })

  it.each(FLOWS.map((flow) => [flow.machine.id, flow] as const))('%s changes its version whenever it changes', (id) => {
    const was = committed[id]
    const now = current[id]!
    expect(was, `${id} has no committed fingerprint; record it with UPDATE_CHART_FINGERPRINTS=1`).toBeDefined()
    if (now.fingerprint !== was!.fingerprint) {
      expect(now.version, `${id} changed but kept version ${now.version}: bump it (and declare a migration if resting flows can go on)`).not.toBe(
        was!.version,
      )
    }
    expect(now, `${id} is at version ${now.version}: record its fingerprint with UPDATE_CHART_FINGERPRINTS=1`).toEqual(was)
  })
})

describe('a chart fingerprint', () => {
  const Context = object({ user: string(), step: optional(string()) })
  const chart = (waiting = 'waiting', guard = 'isReady') =>
    createMachine({
      id: 'sample',
      initial: 'idle',
      states: {
        idle: { tags: 'awaitsRequest', on: { go: { target: waiting, guard } } },
        [waiting]: { tags: 'awaitsRequest', description: 'Waits.', on: { done: 'finished' } },
        finished: { type: 'final' },
      },
    })

  it('changes with a renamed state, a renamed guard, or a context of another shape', () => {
    const base = chartFingerprint(chart(), Context)
    expect(chartFingerprint(chart('waitingForUser'), Context)).not.toBe(base)
    expect(chartFingerprint(chart('waiting', 'isSet'), Context)).not.toBe(base)
    expect(chartFingerprint(chart(), object({ user: string(), step: string() }))).not.toBe(base)
    expect(chartFingerprint(chart(), object({ user: string() }))).not.toBe(base)
  })

  it('stays the same for the same chart built twice', () => {
    expect(chartFingerprint(chart(), Context)).toBe(chartFingerprint(chart(), Context))
  })
})
