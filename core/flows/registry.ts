/**
 * The built-in flows, one line each. `resolveConfig` builds `config.flows` from this list (and the
 * application's own, `config.flows`), and everything that needs to know the flows reads that: the
 * routing table, the step pages, the sign-in page, the sign-in completion's first factors, the
 * inspector, the adapter check; the diagrams, the CLI, the test kit and the second-factor gate
 * check read this list.
 *
 * @module
 */
import { loadNotation } from '../engine/flow.js'
import { credentialsModule } from './credentials/index.js'
import { emailModule } from './email/index.js'
import { logoutModule } from './logout/index.js'
import { oauthModule } from './oauth/index.js'
import { reauthenticateModule } from './reauthenticate/index.js'
import { sessionModule } from './session/index.js'
import { signInCompletionModule } from './signin-completion/index.js'
import { totpEnrolmentModule } from './totp-enrolment/index.js'
import type { FlowModule } from './types.js'
import { webauthnModule } from './webauthn/index.js'

/** Every built-in flow. */
export const builtInFlows: readonly FlowModule[] = Object.freeze([
  sessionModule,
  credentialsModule,
  oauthModule,
  emailModule,
  webauthnModule,
  signInCompletionModule,
  totpEnrolmentModule,
  logoutModule,
  reauthenticateModule,
])

/**
 * The flows of `modules` with their code loaded, so that each one's chart can be read (the
 * diagrams, the test kit and the gate check draw or walk every chart, configured or not).
 */
export async function loadedFlows(modules: readonly FlowModule[] = builtInFlows): Promise<readonly FlowModule[]> {
  await Promise.all(modules.map((module) => module.load?.()))
  // Compiled charts: their xstate notation too, which the diagrams, the test kit and the gate check walk.
  await Promise.all(modules.map((module) => loadNotation(module.flow)))
  return modules
}
