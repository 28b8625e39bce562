/**
 * The organisation membership chart's logic (see `shared/logic.ts`); the chart is
 * `organization-membership.machine.ts`.
 *
 * @module
 */
import { enums, nullable, object, optional, record, string, unknown, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, type FlowOutcome } from './shared/outcome.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The membership chart's id. */
export const ORGANIZATION_MEMBERSHIP = 'organization-membership'

/** What a request changes: a member's lifecycle, or the organisation itself. */
export const MembershipIntent = enums(['suspend', 'reinstate', 'remove', 'leave', 'role', 'transfer', 'update', 'delete'])
export type MembershipIntent = Infer<typeof MembershipIntent>

/** What an organisation update asks to change. */
export const OrganizationChanges = object({
  slug: optional(string()),
  name: optional(string()),
  metadata: optional(record(string(), unknown())),
})
export type OrganizationChanges = Infer<typeof OrganizationChanges>

/** A membership as the answers show it. */
export const MembershipAnswer = object({ organizationId: string(), userId: string(), role: string(), status: string() })
export type MembershipAnswer = Infer<typeof MembershipAnswer>

/** An organisation as the answers show it. */
export const OrganizationAnswer = object({ id: string(), slug: string(), name: string(), metadata: record(string(), unknown()) })
export type OrganizationAnswer = Infer<typeof OrganizationAnswer>

/** Context of one request that changes a membership or an organisation. */
export const OrganizationMembershipContext = object({
  intent: nullable(MembershipIntent),
  /** The signed-in user acting (the session authority's, never the body's). */
  userId: string(),
  /** The organisation the request named (body or query), checked against the active one; then the one acted in. */
  organizationId: nullable(string()),
  /** The member acted on (leaving: the actor). */
  targetId: nullable(string()),
  /** A role change: the role asked for. */
  role: nullable(string()),
  changes: nullable(OrganizationChanges),
  /** What the check decided on: the target's role and status, the change, the actor's role (the adapter's compare-and-set holds them). */
  decided: nullable(
    object({
      from: nullable(object({ role: string(), status: string() })),
      to: nullable(object({ role: optional(string()), status: optional(string()) })),
      actorRole: string(),
    }),
  ),
  /** The memberships after the change (a transfer: the new owner's, then the former owner's). */
  membership: nullable(MembershipAnswer),
  formerOwner: nullable(MembershipAnswer),
  organization: nullable(OrganizationAnswer),
  denial: nullable(Denial),
})
export type OrganizationMembershipContext = Infer<typeof OrganizationMembershipContext>

/** What every request carries. */
export interface RequestFields {
  userId: string
  /** The organisation the body or the query named, `null` when neither named one. */
  organizationId: string | null
}

/** What the check decided: the organisation acted in, and the change the adapter is to apply. */
export interface CheckedChange {
  organizationId: string
  decided: NonNullable<OrganizationMembershipContext['decided']>
}

/** What a change made. */
export interface AppliedChange {
  membership: MembershipAnswer | null
  organization: OrganizationAnswer | null
}

/** Events of a membership request. */
export type OrganizationMembershipEvent =
  | ({ type: 'member.suspend' | 'member.reinstate' | 'member.remove' | 'member.transfer'; targetId: string } & RequestFields & Timestamped)
  | ({ type: 'member.role'; targetId: string; role: string } & RequestFields & Timestamped)
  | ({ type: 'member.leave' } & RequestFields & Timestamped)
  | ({ type: 'organization.update'; changes: OrganizationChanges | null } & RequestFields & Timestamped)
  | ({ type: 'organization.delete' } & RequestFields & Timestamped)
  | EffectResult<'checkChange', CheckedChange, 'forbidden' | 'invalid' | 'refused' | 'threw'>
  | EffectResult<'applyChange', AppliedChange, 'refused' | 'threw'>
  | EffectResult<'stepDown', { membership: MembershipAnswer }, 'threw'>

/** Tags: effect states and the resting state. */
export type OrganizationMembershipTag = 'awaitsRequest' | 'effect.checkChange' | 'effect.applyChange' | 'effect.stepDown'

/** The context a request starts from. */
export const initialContext: OrganizationMembershipContext = {
  intent: null,
  userId: '',
  organizationId: null,
  targetId: null,
  role: null,
  changes: null,
  decided: null,
  membership: null,
  formerOwner: null,
  organization: null,
  denial: null,
}

/**
 * The HTTP status of each refusal (its `code`): a malformed request 400; a change the actor may
 * not make, or one in an organisation other than their active one, 403; a member who is not one of
 * the organisation 404; a change the membership's state does not allow (the last owner, a member
 * not in the state the change starts from, a membership changed meanwhile) 409; a part that
 * failed 503.
 */
export const REFUSAL_STATUS: Readonly<Record<string, number>> = Object.freeze({
  InvalidRequest: 400,
  UnknownRole: 400,
  Forbidden: 403,
  NoActiveOrganization: 403,
  NotActiveOrganization: 403,
  NotAMember: 404,
  LastOwner: 409,
  NotApplicable: 409,
  Changed: 409,
  SlugTaken: 409,
  Unavailable: 503,
})

type Mapper = (args: { context: OrganizationMembershipContext }) => FlowOutcome

const json = (status: number, body: unknown): FlowOutcome => ({ type: 'json', status, body, cache: 'no-store' })

/** A refusal: JSON `{ error: code }` with the code's status (503 for a part that failed). */
const toRefusal: Mapper = ({ context }) => {
  const code = context.denial?.code ?? 'Unavailable'
  return json(REFUSAL_STATUS[code] ?? 503, { error: Object.hasOwn(REFUSAL_STATUS, code) ? code : 'Unavailable' })
}

/** The membership as changed. */
const toMembership: Mapper = ({ context }) => json(200, { membership: context.membership })

/** A transfer: the new owner's membership and the former owner's. */
const toTransferred: Mapper = ({ context }) => json(200, { membership: context.membership, formerOwner: context.formerOwner })

/** The organisation as updated. */
const toUpdated: Mapper = ({ context }) => json(200, { organization: context.organization })

/** The organisation deleted. */
const toDeleted: Mapper = ({ context }) => json(200, { deleted: { id: context.organizationId } })

type MembershipGuard = Guard<OrganizationMembershipContext, OrganizationMembershipEvent>
type MembershipAssignment = Assignment<OrganizationMembershipContext, OrganizationMembershipEvent>

const reasonIs =
  (reason: string): MembershipGuard =>
  ({ event }) =>
    'reason' in event && event.reason === reason

const intentIs =
  (intent: MembershipIntent): MembershipGuard =>
  ({ context }) =>
    context.intent === intent

/** The chart's guards. */
export const guards = {
  isForbidden: reasonIs('forbidden'),
  isInvalid: reasonIs('invalid'),
  isRefused: reasonIs('refused'),
  isSuspending: intentIs('suspend'),
  isReinstating: intentIs('reinstate'),
  isRemoving: intentIs('remove'),
  isLeaving: intentIs('leave'),
  isChangingRole: intentIs('role'),
  isTransferring: intentIs('transfer'),
  isUpdating: intentIs('update'),
} satisfies Record<string, MembershipGuard>

const INTENT_OF_EVENT: Readonly<Record<string, MembershipIntent>> = {
  'member.suspend': 'suspend',
  'member.reinstate': 'reinstate',
  'member.remove': 'remove',
  'member.leave': 'leave',
  'member.role': 'role',
  'member.transfer': 'transfer',
  'organization.update': 'update',
  'organization.delete': 'delete',
}

/** The chart's assignments. */
export const assignments = {
  rememberRequest: ({ event }) => {
    expectEvent(event, ['member.suspend', 'member.reinstate', 'member.remove', 'member.leave', 'member.role', 'member.transfer', 'organization.update', 'organization.delete'])
    return {
      intent: INTENT_OF_EVENT[event.type]!,
      userId: event.userId,
      organizationId: event.organizationId,
      targetId: 'targetId' in event ? event.targetId : event.type === 'member.leave' ? event.userId : null,
      role: 'role' in event ? event.role : null,
      changes: 'changes' in event ? event.changes : null,
    }
  },
  rememberCheck: ({ event }) => {
    expectEvent(event, 'checkChange.done')
    return { organizationId: event.output.organizationId, decided: event.output.decided }
  },
  rememberChange: ({ event }) => {
    expectEvent(event, 'applyChange.done')
    return { membership: event.output.membership, organization: event.output.organization }
  },
  rememberFormerOwner: ({ event }) => {
    expectEvent(event, 'stepDown.done')
    return { formerOwner: event.output.membership }
  },
  recordDenial: ({ event }) => ({ denial: denialOf(event as never) }),
} satisfies Record<string, MembershipAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toMembership, toTransferred, toUpdated, toDeleted, toRefusal }
