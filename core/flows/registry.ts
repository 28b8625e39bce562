/**
 * The built-in flows, one line each: the ones every configuration may run without naming a
 * feature. `resolveConfig` builds `config.flows` from this list, the flows the configuration's
 * feature modules carry (`secondFactor: totp()`, `stepUp: stepUp()`, a `Passkey` / `WebAuthn`
 * provider: see `core/modules.ts`), and the application's own (`config.flows`); everything that
 * needs to know a configuration's flows reads that: the routing table, the step pages, the sign-in
 * page, the sign-in completion's first factors, the inspector, the adapter check. The diagrams, the
 * CLI, the test kit and the second-factor gate check read every flow (`./catalogue.ts`).
 *
 * The optional features' flows are not imported here: a bundler links them only for a
 * configuration that names them.
 *
 * @module
 */
import { credentialsModule } from './credentials/index.js'
import { emailModule } from './email/index.js'
import { logoutModule } from './logout/index.js'
import { oauthModule } from './oauth/index.js'
import { sessionModule } from './session/index.js'
import { signInCompletionModule } from './signin-completion/index.js'
import type { FlowModule } from './types.js'

/** Every built-in flow that no feature import brings. */
export const builtInFlows: readonly FlowModule[] = Object.freeze([
  sessionModule,
  credentialsModule,
  oauthModule,
  emailModule,
  signInCompletionModule,
  logoutModule,
])

