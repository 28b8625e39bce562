/**
 * An invitation to an organisation, one request at a time; the invitation's own lifecycle
 * (sent → accepted | declined | expired | revoked) is stored by the adapter and moved once,
 * atomically, by each settling state:
 *
 * - send: a member whose role allows `invitation:create` invites an address to a role no higher
 *   than their own, counted per organisation and per inviter → the invitation stored and its
 *   link e-mailed;
 * - accept / decline: the link's token, from a signed-in user whose stored, verified address is
 *   the invited one → the invitation settled once (accepting: the membership made active); an
 *   expired invitation is settled as expired;
 * - revoke: a member whose role allows `invitation:revoke` in the invitation's organisation.
 *
 * Only `accepting` makes anyone a member, and every path to it passes `checkingInvitee`: the
 * graph check in the tests holds the chart to it.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  GRANTS_MEMBERSHIP_TAG,
  guards,
  initialContext,
  ORGANIZATION_INVITATION,
  outputs,
  type OrganizationInvitationContext,
  type OrganizationInvitationEvent,
  type OrganizationInvitationTag,
} from './organization-invitation.logic.js'

export {
  GRANTS_MEMBERSHIP_TAG,
  ORGANIZATION_INVITATION,
  OrganizationInvitationContext,
  type OrganizationInvitationEvent,
  type OrganizationInvitationTag,
} from './organization-invitation.logic.js'

const refusal = { target: '#organization-invitation.refused', actions: 'recordDenial' } as const
const failure = { target: '#organization-invitation.failed', actions: 'recordDenial' } as const

/** Builds the organisation invitation machine. */
export const buildOrganizationInvitation = () =>
  setup({
    types: {} as { context: OrganizationInvitationContext; events: OrganizationInvitationEvent; tags: OrganizationInvitationTag },
    guards,
    actions: {
      rememberSend: assign(assignments.rememberSend),
      rememberAnswer: assign(assignments.rememberAnswer),
      rememberRevoke: assign(assignments.rememberRevoke),
      rememberAdmission: assign(assignments.rememberAdmission),
      rememberInvitation: assign(assignments.rememberInvitation),
      rememberInvitee: assign(assignments.rememberInvitee),
      rememberRevoked: assign(assignments.rememberRevoked),
      recordDenial: assign(assignments.recordDenial),
    },
  }).createMachine({
    id: ORGANIZATION_INVITATION,
    version: '1',
    description: 'Sends an invitation to an address, and settles it once: accepted or declined by the proven invitee, revoked by a member allowed to, expired.',
    initial: 'idle',
    context: initialContext,
    output: outputs.finalStateOutcome,
    states: {
      idle: {
        tags: 'awaitsRequest',
        description: 'POST /organization/invite, or POST /organization/invitation with `action` accept, decline or revoke, from a signed-in user.',
        on: {
          'invitation.send': { target: 'sending', actions: 'rememberSend' },
          'invitation.accept': { target: 'answering', actions: 'rememberAnswer' },
          'invitation.decline': { target: 'answering', actions: 'rememberAnswer' },
          'invitation.revoke': { target: 'revoking', actions: 'rememberRevoke' },
        },
      },
      sending: {
        description: 'An invitation from a member allowed to invite: admitted, stored, its link e-mailed.',
        initial: 'admittingInvitation',
        states: {
          admittingInvitation: {
            tags: 'effect.admitInvitation',
            description: "Checks the inviter's active membership, `invitation:create` and that the role is no higher than theirs; counts it per organisation and per inviter.",
            on: {
              'admitInvitation.done': { target: 'sendingInvitation', actions: 'rememberAdmission' },
              'admitInvitation.failed': [
                { guard: 'isForbidden', target: '#organization-invitation.forbidden', actions: 'recordDenial' },
                { guard: 'isInvalid', target: '#organization-invitation.invalid', actions: 'recordDenial' },
                { guard: 'isLimited', target: '#organization-invitation.limited', actions: 'recordDenial' },
                failure,
              ],
            },
          },
          sendingInvitation: {
            tags: 'effect.sendInvitation',
            description: 'Stores the invitation (status sent, with its expiry) and e-mails the accept link; the token is never logged.',
            on: {
              'sendInvitation.done': { target: '#organization-invitation.sent', actions: 'rememberInvitation' },
              'sendInvitation.failed': failure,
            },
          },
        },
      },
      answering: {
        description: "The invitee's answer from the link: checked against the signed-in user's proven address, then settled once.",
        initial: 'checkingInvitee',
        states: {
          checkingInvitee: {
            tags: 'effect.checkInvitee',
            description: "Checks the link's token, that the invitation is still sent and not expired, and that the signed-in user's verified address is the invited one.",
            on: {
              'checkInvitee.done': [
                { guard: 'isAccepting', target: 'accepting', actions: 'rememberInvitee' },
                { target: 'declining', actions: 'rememberInvitee' },
              ],
              'checkInvitee.failed': [
                { guard: 'isExpired', target: 'expiring', actions: 'recordDenial' },
                { guard: 'isRefused', ...refusal },
                failure,
              ],
            },
          },
          expiring: {
            tags: 'effect.expireInvitation',
            description: 'The invitation outlived its expiry: settled as expired, so no later answer finds it sent.',
            on: {
              'expireInvitation.done': '#organization-invitation.expired',
              'expireInvitation.failed': failure,
            },
          },
          accepting: {
            tags: ['effect.acceptInvitation', GRANTS_MEMBERSHIP_TAG],
            description: 'Settles the invitation as accepted (once, atomically, before its expiry), then makes the membership active with the invited role.',
            on: {
              'acceptInvitation.done': '#organization-invitation.accepted',
              'acceptInvitation.failed': [{ guard: 'isRefused', ...refusal }, failure],
            },
          },
          declining: {
            tags: 'effect.declineInvitation',
            description: 'Settles the invitation as declined (once, atomically).',
            on: {
              'declineInvitation.done': '#organization-invitation.declined',
              'declineInvitation.failed': [{ guard: 'isRefused', ...refusal }, failure],
            },
          },
        },
      },
      revoking: {
        description: 'A revocation by a member of the invitation\'s organisation allowed to revoke.',
        initial: 'checkingRevoker',
        states: {
          checkingRevoker: {
            tags: 'effect.checkRevoker',
            description: "Checks that the invitation is of the revoker's active organisation, still sent, and that their role allows `invitation:revoke`.",
            on: {
              'checkRevoker.done': { target: 'revokingInvitation', actions: 'rememberRevoked' },
              'checkRevoker.failed': [
                { guard: 'isForbidden', target: '#organization-invitation.forbidden', actions: 'recordDenial' },
                { guard: 'isRefused', ...refusal },
                failure,
              ],
            },
          },
          revokingInvitation: {
            tags: 'effect.revokeInvitation',
            description: 'Settles the invitation as revoked (once, atomically).',
            on: {
              'revokeInvitation.done': '#organization-invitation.revoked',
              'revokeInvitation.failed': [{ guard: 'isRefused', ...refusal }, failure],
            },
          },
        },
      },
      sent: { type: 'final', description: 'The invitation is stored and its link sent: 201 with its id.', output: outputs.toSent },
      accepted: { type: 'final', description: 'The invitee is an active member with the invited role.', output: outputs.toAccepted },
      declined: { type: 'final', description: 'The invitee declined: the invitation is settled, no membership.', output: outputs.toDeclined },
      revoked: { type: 'final', description: 'The invitation is revoked: its link accepts nothing.', output: outputs.toRevoked },
      expired: { type: 'final', description: 'The invitation had expired (now settled so): 410.', output: outputs.toRefusal },
      refused: {
        type: 'final',
        description: 'A wrong or unverified address, a bad token, an invitation no longer sent, or already a member: nothing changed.',
        output: outputs.toRefusal,
      },
      forbidden: { type: 'final', description: "The actor's role does not allow it in their active organisation: 403.", output: outputs.toRefusal },
      invalid: { type: 'final', description: 'A malformed address or an unknown role: 400.', output: outputs.toRefusal },
      limited: { type: 'final', description: 'Too many invitations from this organisation or inviter: 429 with `retryAfter`.', output: outputs.toRefusal },
      failed: { type: 'final', description: 'The adapter, the store or the sender failed: 503 with Retry-After, nothing half-done.', output: outputs.toRefusal },
    },
  })

/** The organisation invitation machine; marked pure, so a bundle that never reads it does not build it. */
export const organizationInvitationMachine = /* @__PURE__ */ buildOrganizationInvitation()
