/**
 * The organisation invitation chart's logic (see `shared/logic.ts`); the chart is
 * `organization-invitation.machine.ts`.
 *
 * @module
 */
import { enums, nullable, number, object, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, type FlowOutcome } from './shared/outcome.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The invitation chart's id. */
export const ORGANIZATION_INVITATION = 'organization-invitation'

/** The tag of the one state that makes a user a member (the graph check follows it). */
export const GRANTS_MEMBERSHIP_TAG = 'grantsMembership'

/** What a request does to an invitation. */
export const InvitationIntent = enums(['send', 'accept', 'decline', 'revoke'])
export type InvitationIntent = Infer<typeof InvitationIntent>

/** How the answer is given: JSON to a script, a redirect to the browser that posted the confirmation page. */
export const InvitationAnswer = enums(['json', 'page'])
export type InvitationAnswer = Infer<typeof InvitationAnswer>

/** Context of one request on an invitation. */
export const OrganizationInvitationContext = object({
  intent: nullable(InvitationIntent),
  answer: InvitationAnswer,
  /** Where a page answer goes once the invitation is settled. */
  answerUrl: string(),
  /** The signed-in user acting (the session authority's, never the body's). */
  userId: string(),
  /** Sending: the invited address and role. */
  email: nullable(string()),
  role: nullable(string()),
  /** The invitation acted on (sent: the new one). */
  invitationId: nullable(string()),
  organizationId: nullable(string()),
  /** The link's token, held until it is checked; cleared on every way out. */
  token: nullable(string()),
  /** Epoch seconds the invitation expires at (the sent one). */
  expires: nullable(number()),
  denial: nullable(Denial),
})
export type OrganizationInvitationContext = Infer<typeof OrganizationInvitationContext>

/** What the checks read of the request. */
export interface RequestFields {
  userId: string
  answer: InvitationAnswer
  answerUrl: string
}

/** Events of an invitation request. */
export type OrganizationInvitationEvent =
  | ({ type: 'invitation.send'; email: string; role: string } & RequestFields & Timestamped)
  | ({ type: 'invitation.accept' | 'invitation.decline'; invitationId: string; token: string } & RequestFields & Timestamped)
  | ({ type: 'invitation.revoke'; invitationId: string } & RequestFields & Timestamped)
  | EffectResult<'admitInvitation', { organizationId: string; email: string }, 'forbidden' | 'invalid' | 'limited' | 'threw'>
  | EffectResult<'sendInvitation', { invitationId: string; expires: number }, 'threw'>
  | EffectResult<'checkInvitee', { organizationId: string; role: string }, 'refused' | 'expired' | 'threw'>
  | EffectResult<'expireInvitation', null, 'threw'>
  | EffectResult<'acceptInvitation', null, 'refused' | 'threw'>
  | EffectResult<'declineInvitation', null, 'refused' | 'threw'>
  | EffectResult<'checkRevoker', { organizationId: string }, 'forbidden' | 'refused' | 'threw'>
  | EffectResult<'revokeInvitation', null, 'refused' | 'threw'>

/** Tags: effect states, the resting state, and the membership-granting state. */
export type OrganizationInvitationTag =
  | 'awaitsRequest'
  | 'effect.admitInvitation'
  | 'effect.sendInvitation'
  | 'effect.checkInvitee'
  | 'effect.expireInvitation'
  | 'effect.acceptInvitation'
  | 'effect.declineInvitation'
  | 'effect.checkRevoker'
  | 'effect.revokeInvitation'
  | typeof GRANTS_MEMBERSHIP_TAG

/** The context a request starts from. */
export const initialContext: OrganizationInvitationContext = {
  intent: null,
  answer: 'json',
  answerUrl: '',
  userId: '',
  email: null,
  role: null,
  invitationId: null,
  organizationId: null,
  token: null,
  expires: null,
  denial: null,
}

/**
 * The HTTP status of each refusal a JSON answer names (its `code`): a request the user may not
 * make is 403, an invitation that is not (or no longer) there to act on 404 or 409, an expired
 * one 410, too many 429, and a part that failed 503 (retried later, nothing half-done).
 */
export const REFUSAL_STATUS: Readonly<Record<string, number>> = Object.freeze({
  InvalidRequest: 400,
  Forbidden: 403,
  NoActiveOrganization: 403,
  NotActiveOrganization: 403,
  WrongAddress: 403,
  AddressNotVerified: 403,
  NotFound: 404,
  AlreadyAMember: 409,
  NotPending: 409,
  Expired: 410,
  TooManyInvitations: 429,
  Unavailable: 503,
})

type Mapper = (args: { context: OrganizationInvitationContext }) => FlowOutcome

const json = (status: number, body: unknown): FlowOutcome => ({ type: 'json', status, body, cache: 'no-store' })

/** A refusal: JSON `{ error: code }` (and `retryAfter`), or for the confirmation page the error page. */
const toRefusal: Mapper = ({ context }) => {
  const code = context.denial?.code ?? 'Unavailable'
  const retryAfter = context.denial?.retryAfter
  if (context.answer === 'page') {
    return { type: 'error', error: (context.denial?.error ?? 'Configuration') as never, ...(retryAfter !== undefined ? { retryAfter } : {}) }
  }
  return json(REFUSAL_STATUS[code] ?? 503, { error: code, ...(retryAfter !== undefined ? { retryAfter } : {}) })
}

/** The invitation sent: its id (to revoke it by), organisation, address, role and expiry. */
const toSent: Mapper = ({ context }) =>
  json(201, {
    invitation: {
      id: context.invitationId,
      organizationId: context.organizationId,
      email: context.email,
      role: context.role,
      status: 'sent',
      expires: new Date((context.expires ?? 0) * 1000).toISOString(),
    },
  })

/** The invitation settled: JSON with its new status (and the membership), or to the page's `callbackUrl`. */
const settled =
  (status: 'accepted' | 'declined' | 'revoked'): Mapper =>
  ({ context }) => {
    if (context.answer === 'page') return { type: 'redirect', url: context.answerUrl }
    return json(200, {
      invitation: { id: context.invitationId, organizationId: context.organizationId, status },
      ...(status === 'accepted'
        ? { membership: { organizationId: context.organizationId, userId: context.userId, role: context.role, status: 'active' } }
        : {}),
    })
  }
const toAccepted = settled('accepted')
const toDeclined = settled('declined')
const toRevoked = settled('revoked')

type InvitationGuard = Guard<OrganizationInvitationContext, OrganizationInvitationEvent>
type InvitationAssignment = Assignment<OrganizationInvitationContext, OrganizationInvitationEvent>

const reasonIs =
  (reason: string): InvitationGuard =>
  ({ event }) =>
    'reason' in event && event.reason === reason

/** The chart's guards. */
export const guards = {
  isForbidden: reasonIs('forbidden'),
  isInvalid: reasonIs('invalid'),
  isLimited: reasonIs('limited'),
  isRefused: reasonIs('refused'),
  isExpired: reasonIs('expired'),
  isAccepting: ({ context }) => context.intent === 'accept',
} satisfies Record<string, InvitationGuard>

const requestFields = (event: RequestFields) => ({ userId: event.userId, answer: event.answer, answerUrl: event.answerUrl })

/** The chart's assignments. */
export const assignments = {
  rememberSend: ({ event }) => {
    expectEvent(event, 'invitation.send')
    return { intent: 'send', ...requestFields(event), email: event.email, role: event.role }
  },
  rememberAnswer: ({ event }) => {
    expectEvent(event, ['invitation.accept', 'invitation.decline'])
    return {
      intent: event.type === 'invitation.accept' ? 'accept' : 'decline',
      ...requestFields(event),
      invitationId: event.invitationId,
      token: event.token,
    }
  },
  rememberRevoke: ({ event }) => {
    expectEvent(event, 'invitation.revoke')
    return { intent: 'revoke', ...requestFields(event), invitationId: event.invitationId }
  },
  rememberAdmission: ({ event }) => {
    expectEvent(event, 'admitInvitation.done')
    return { organizationId: event.output.organizationId, email: event.output.email }
  },
  rememberInvitation: ({ event }) => {
    expectEvent(event, 'sendInvitation.done')
    return { invitationId: event.output.invitationId, expires: event.output.expires }
  },
  rememberRevoked: ({ event }) => {
    expectEvent(event, 'checkRevoker.done')
    return { organizationId: event.output.organizationId }
  },
  rememberInvitee: ({ event }) => {
    expectEvent(event, 'checkInvitee.done')
    return { organizationId: event.output.organizationId, role: event.output.role, token: null }
  },
  recordDenial: ({ event }) => ({ token: null, denial: denialOf(event as never) }),
} satisfies Record<string, InvitationAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toSent, toAccepted, toDeclined, toRevoked, toRefusal }
