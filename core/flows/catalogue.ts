/**
 * Every flow authchart ships, the optional features' with the built-in ones, for the readers that
 * draw or walk every chart whatever a configuration names (the diagrams, the test kit, the CLI).
 * Never imported on a request's path: it links the second factor, the re-authentication,
 * WebAuthn, the password flows, the organisation invitations and memberships, and the device
 * authorization grant.
 *
 * @module
 */
import { reauthenticateModule } from './reauthenticate/index.js'
import { builtInFlows } from './registry.js'
import { loadedFlows } from './loaded.js'
import { passwordModules } from './password/index.js'
import { totpEnrolmentModule } from './totp-enrolment/index.js'
import type { FlowModule } from './types.js'
import { webauthnModule } from './webauthn/index.js'
import { organizationInvitationModule } from '../organizations/invitations.js'
import { deviceAuthorizationModule } from '../device-authorization/flow.js'
import { organizationMembershipModule } from '../organizations/members.js'

/** Every flow authchart ships, in the order the diagrams list them. */
export const everyFlow: readonly FlowModule[] = Object.freeze([
  ...builtInFlows.slice(0, 4),
  webauthnModule,
  ...passwordModules,
  ...builtInFlows.slice(4, 5),
  totpEnrolmentModule,
  ...builtInFlows.slice(5),
  reauthenticateModule,
  organizationInvitationModule,
  deviceAuthorizationModule,
  organizationMembershipModule,
])

/** Every flow authchart ships, with its code loaded (see {@link loadedFlows}). */
export function everyFlowLoaded(): Promise<readonly FlowModule[]> {
  return loadedFlows(everyFlow)
}
