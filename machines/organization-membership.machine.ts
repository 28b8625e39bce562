/**
 * A change of a membership or of an organisation, one request at a time. The membership's own
 * lifecycle (invited → active ⇄ suspended → removed; the invitation chart makes an invited member
 * active) is stored by the adapter and moved by `applyingChange` only, with a compare-and-set:
 *
 * - suspend / reinstate: an active member suspended, a suspended one made active again;
 * - remove / leave: a member removed by one allowed to, or the actor leaving;
 * - role: a member given another role, never one above the actor's;
 * - transfer: an owner makes an active member the owner, and steps down to admin;
 * - update / delete: the organisation's slug, name or metadata changed, or the organisation
 *   deleted with every membership (owner only, after a recent proof).
 *
 * Every change is checked first (`checkingChange`): the actor's active membership of the
 * organisation the route acts in (a body or query naming another is refused), their role's
 * permission, no role granted or member touched above their own, the target a member of that
 * organisation; the adapter then applies it only while nothing it was decided on changed, and
 * never so that the last active owner leaves, is removed, suspended or demoted.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  guards,
  initialContext,
  ORGANIZATION_MEMBERSHIP,
  outputs,
  type OrganizationMembershipContext,
  type OrganizationMembershipEvent,
  type OrganizationMembershipTag,
} from './organization-membership.logic.js'

export {
  ORGANIZATION_MEMBERSHIP,
  OrganizationMembershipContext,
  type OrganizationMembershipEvent,
  type OrganizationMembershipTag,
} from './organization-membership.logic.js'

const refusal = { target: '#organization-membership.refused', actions: 'recordDenial' } as const
const failure = { target: '#organization-membership.failed', actions: 'recordDenial' } as const
const request = { target: 'changing', actions: 'rememberRequest' } as const

/** Builds the organisation membership machine. */
export const buildOrganizationMembership = () =>
  setup({
    types: {} as { context: OrganizationMembershipContext; events: OrganizationMembershipEvent; tags: OrganizationMembershipTag },
    guards,
    actions: {
      rememberRequest: assign(assignments.rememberRequest),
      rememberCheck: assign(assignments.rememberCheck),
      rememberChange: assign(assignments.rememberChange),
      rememberFormerOwner: assign(assignments.rememberFormerOwner),
      recordDenial: assign(assignments.recordDenial),
    },
  }).createMachine({
    id: ORGANIZATION_MEMBERSHIP,
    version: '1',
    description:
      "Changes a member's lifecycle (suspend, reinstate, remove, leave, role, transfer of ownership) or the organisation (update, delete): checked against the actor's active membership, then applied once by the adapter's compare-and-set, never leaving the organisation without an active owner.",
    initial: 'idle',
    context: initialContext,
    output: outputs.finalStateOutcome,
    states: {
      idle: {
        tags: 'awaitsRequest',
        description: 'POST /organization/<suspend | reinstate | remove | leave | role | transfer | update | delete> from a signed-in user.',
        on: {
          'member.suspend': request,
          'member.reinstate': request,
          'member.remove': request,
          'member.leave': request,
          'member.role': request,
          'member.transfer': request,
          'organization.update': request,
          'organization.delete': request,
        },
      },
      changing: {
        description: 'One change in the actor\'s active organisation: checked, then applied atomically.',
        initial: 'checkingChange',
        states: {
          checkingChange: {
            tags: 'effect.checkChange',
            description:
              "Re-reads the actor's active membership (the organisation named must be it), their role's permission, the role asked and the target's rank against theirs, the target's membership of that organisation and the state the change starts from.",
            on: {
              'checkChange.done': { target: 'applyingChange', actions: 'rememberCheck' },
              'checkChange.failed': [
                { guard: 'isForbidden', target: '#organization-membership.forbidden', actions: 'recordDenial' },
                { guard: 'isInvalid', target: '#organization-membership.invalid', actions: 'recordDenial' },
                { guard: 'isRefused', ...refusal },
                failure,
              ],
            },
          },
          applyingChange: {
            tags: 'effect.applyChange',
            description:
              "The adapter's compare-and-set: applied only while the target's and the actor's memberships are as checked, and never taking the last active owner away (of two owners demoting each other at once, one remains).",
            on: {
              'applyChange.done': [
                { guard: 'isTransferring', target: 'steppingDown', actions: 'rememberChange' },
                { guard: 'isSuspending', target: '#organization-membership.suspended', actions: 'rememberChange' },
                { guard: 'isReinstating', target: '#organization-membership.reinstated', actions: 'rememberChange' },
                { guard: 'isRemoving', target: '#organization-membership.removed', actions: 'rememberChange' },
                { guard: 'isLeaving', target: '#organization-membership.left', actions: 'rememberChange' },
                { guard: 'isChangingRole', target: '#organization-membership.roleChanged', actions: 'rememberChange' },
                { guard: 'isUpdating', target: '#organization-membership.updated', actions: 'rememberChange' },
                { target: '#organization-membership.deleted', actions: 'rememberChange' },
              ],
              'applyChange.failed': [{ guard: 'isRefused', ...refusal }, failure],
            },
          },
          steppingDown: {
            tags: 'effect.stepDown',
            description: 'The new owner is an owner: the former owner steps down to admin (a failure leaves two owners, never none).',
            on: {
              'stepDown.done': { target: '#organization-membership.transferred', actions: 'rememberFormerOwner' },
              'stepDown.failed': failure,
            },
          },
        },
      },
      suspended: { type: 'final', description: 'The member is suspended: their next request has no organisation and no permission.', output: outputs.toMembership },
      reinstated: { type: 'final', description: 'The suspended member is active again, with the role they had.', output: outputs.toMembership },
      removed: { type: 'final', description: 'The member is removed: their next request has no organisation and no permission.', output: outputs.toMembership },
      left: { type: 'final', description: 'The actor left the organisation.', output: outputs.toMembership },
      roleChanged: { type: 'final', description: 'The member has the new role, seen by their next request.', output: outputs.toMembership },
      transferred: { type: 'final', description: 'The active member is the owner; the former owner is an admin.', output: outputs.toTransferred },
      updated: { type: 'final', description: "The organisation's slug, name or metadata is changed.", output: outputs.toUpdated },
      deleted: { type: 'final', description: 'The organisation is deleted with every membership and invitation of it.', output: outputs.toDeleted },
      forbidden: {
        type: 'final',
        description: "No active organisation, a forged organisation id, or a change the actor's role does not allow: 403, nothing changed.",
        output: outputs.toRefusal,
      },
      invalid: { type: 'final', description: 'A malformed request or an unknown role: 400.', output: outputs.toRefusal },
      refused: {
        type: 'final',
        description: 'No such member, the last owner, a member not in the state the change starts from, or a membership changed meanwhile: nothing changed.',
        output: outputs.toRefusal,
      },
      failed: { type: 'final', description: 'The adapter failed: 503 with Retry-After.', output: outputs.toRefusal },
    },
  })

/** The organisation membership machine; marked pure, so a bundle that never reads it does not build it. */
export const organizationMembershipMachine = /* @__PURE__ */ buildOrganizationMembership()
