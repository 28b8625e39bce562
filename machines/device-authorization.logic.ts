/**
 * The device authorization chart's logic (see `shared/logic.ts`); the chart is
 * `device-authorization.machine.ts`.
 *
 * No code reaches the chart: a request carries the keyed hash of the device code or user code it
 * names (computed by the handler), and the codes the chart issues stay with the request that
 * issued them, so neither is ever in a snapshot, a trace or an inspector's view.
 *
 * @module
 */
import { enums, nullable, number, object, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, type FlowOutcome } from './shared/outcome.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The device authorization chart's id. */
export const DEVICE_AUTHORIZATION = 'device-authorization'

/** The tag of the one state that gives the device a credential (the graph check follows it). */
export const ISSUES_CREDENTIAL_TAG = 'issuesCredential'

/** What a request does to a device authorization. */
export const DeviceIntent = enums(['request', 'poll', 'approve', 'deny'])
export type DeviceIntent = Infer<typeof DeviceIntent>

/** Where a device request stands, as a poll finds it. */
export const DeviceStatus = enums(['pending', 'slowDown', 'approved', 'denied', 'expired'])
export type DeviceStatus = Infer<typeof DeviceStatus>

/** Context of one request on a device authorization. */
export const DeviceAuthorizationContext = object({
  intent: nullable(DeviceIntent),
  /** The client the device says it is (request and poll). */
  clientId: string(),
  /** The scopes asked, space-separated (request). */
  scope: nullable(string()),
  /** The signed-in user answering (approve and deny; the session authority's, never the body's). */
  userId: string(),
  /** The keyed hash of the code the request names: the device code (poll) or the user code (approve, deny). */
  codeKey: nullable(string()),
  /** The keyed hash of the device code of the request acted on. */
  deviceKey: nullable(string()),
  /** Seconds the codes live (issued), and the polling interval (issued, slowed down). */
  expiresIn: nullable(number()),
  interval: nullable(number()),
  status: nullable(DeviceStatus),
  denial: nullable(Denial),
})
export type DeviceAuthorizationContext = Infer<typeof DeviceAuthorizationContext>

/** Events of a device authorization request. */
export type DeviceAuthorizationEvent =
  | ({ type: 'device.request'; clientId: string; scope: string | null } & Timestamped)
  | ({ type: 'device.poll'; clientId: string; codeKey: string } & Timestamped)
  | ({ type: 'device.approve' | 'device.deny'; userId: string; codeKey: string } & Timestamped)
  | EffectResult<'issueCodes', { expiresIn: number; interval: number }, 'invalidClient' | 'invalidScope' | 'threw'>
  | EffectResult<'checkPoll', { deviceKey: string; status: DeviceStatus; interval: number }, 'unknown' | 'threw'>
  | EffectResult<'redeemDeviceCode', { expiresIn: number }, 'spent' | 'threw'>
  | EffectResult<'checkUserCode', { deviceKey: string }, 'unknown' | 'limited' | 'threw'>
  | EffectResult<'approveDevice', null, 'settled' | 'threw'>
  | EffectResult<'denyDevice', null, 'settled' | 'threw'>

/** Tags: effect states, the resting state, and the credential-issuing state. */
export type DeviceAuthorizationTag =
  | 'awaitsRequest'
  | 'effect.issueCodes'
  | 'effect.checkPoll'
  | 'effect.redeemDeviceCode'
  | 'effect.checkUserCode'
  | 'effect.approveDevice'
  | 'effect.denyDevice'
  | typeof ISSUES_CREDENTIAL_TAG

/** The context a request starts from. */
export const initialContext: DeviceAuthorizationContext = {
  intent: null,
  clientId: '',
  scope: null,
  userId: '',
  codeKey: null,
  deviceKey: null,
  expiresIn: null,
  interval: null,
  status: null,
  denial: null,
}

type Mapper = (args: { context: DeviceAuthorizationContext }) => FlowOutcome

const json = (status: number, body: unknown): FlowOutcome => ({ type: 'json', status, body, cache: 'no-store' })

/** An error of the device flow (RFC 8628 and RFC 6749), as the token and device authorization endpoints answer it. */
const oauthError =
  (error: string, status = 400): Mapper =>
  ({ context }) =>
    json(status, { error, ...(error === 'slow_down' && context.interval !== null ? { interval: context.interval } : {}) })

/** The codes issued: what the device is told besides them (the handler adds the codes themselves). */
const toIssued: Mapper = ({ context }) => json(200, { expires_in: context.expiresIn, interval: context.interval })

/** The device's credential: its lifetime (the handler adds the token itself). */
const toRedeemed: Mapper = ({ context }) => json(200, { token_type: 'Bearer', expires_in: context.expiresIn })

/** The user's answer recorded. */
const toAnswered: Mapper = ({ context }) => json(200, { status: context.intent === 'approve' ? 'approved' : 'denied' })

/** A refusal of the user's answer: the code names nothing they may answer, too many tries, or a part failed. */
const toRefusal: Mapper = ({ context }) => {
  const code = context.denial?.code ?? 'Unavailable'
  const retryAfter = context.denial?.retryAfter
  const status = code === 'TooManyAttempts' ? 429 : code === 'Unavailable' ? 503 : 400
  return json(status, { error: code, ...(retryAfter !== undefined ? { retryAfter } : {}) })
}

/** A part failed: 503, nothing issued (the handler adds `Retry-After`). */
const toUnavailable: Mapper = () => json(503, { error: 'temporarily_unavailable' })

type DeviceGuard = Guard<DeviceAuthorizationContext, DeviceAuthorizationEvent>
type DeviceAssignment = Assignment<DeviceAuthorizationContext, DeviceAuthorizationEvent>

const reasonIs =
  (reason: string): DeviceGuard =>
  ({ event }) =>
    'reason' in event && event.reason === reason

const statusIs =
  (status: DeviceStatus): DeviceGuard =>
  ({ event }) =>
    event.type === 'checkPoll.done' && event.output.status === status

/** The chart's guards. */
export const guards = {
  isInvalidClient: reasonIs('invalidClient'),
  isInvalidScope: reasonIs('invalidScope'),
  isUnknown: reasonIs('unknown'),
  isLimited: reasonIs('limited'),
  isSettled: reasonIs('settled'),
  isSpent: reasonIs('spent'),
  isApproved: statusIs('approved'),
  isDenied: statusIs('denied'),
  isExpired: statusIs('expired'),
  isSlowDown: statusIs('slowDown'),
  isApproving: ({ context }) => context.intent === 'approve',
} satisfies Record<string, DeviceGuard>

/** The chart's assignments. */
export const assignments = {
  rememberRequest: ({ event }) => {
    expectEvent(event, 'device.request')
    return { intent: 'request', clientId: event.clientId, scope: event.scope }
  },
  rememberPoll: ({ event }) => {
    expectEvent(event, 'device.poll')
    return { intent: 'poll', clientId: event.clientId, codeKey: event.codeKey }
  },
  rememberAnswer: ({ event }) => {
    expectEvent(event, ['device.approve', 'device.deny'])
    return { intent: event.type === 'device.approve' ? 'approve' : 'deny', userId: event.userId, codeKey: event.codeKey }
  },
  rememberIssued: ({ event }) => {
    expectEvent(event, 'issueCodes.done')
    return { expiresIn: event.output.expiresIn, interval: event.output.interval }
  },
  rememberPollStatus: ({ event }) => {
    expectEvent(event, 'checkPoll.done')
    return { deviceKey: event.output.deviceKey, status: event.output.status, interval: event.output.interval }
  },
  rememberRedeemed: ({ event }) => {
    expectEvent(event, 'redeemDeviceCode.done')
    return { expiresIn: event.output.expiresIn }
  },
  rememberDevice: ({ event }) => {
    expectEvent(event, 'checkUserCode.done')
    return { deviceKey: event.output.deviceKey }
  },
  recordDenial: ({ event }) => ({ denial: denialOf(event as never) }),
} satisfies Record<string, DeviceAssignment>

/** The chart's outputs. */
export const outputs = {
  finalStateOutcome,
  toIssued,
  toRedeemed,
  toAnswered,
  toRefusal,
  toUnavailable,
  toInvalidClient: oauthError('invalid_client'),
  toInvalidScope: oauthError('invalid_scope'),
  toInvalidGrant: oauthError('invalid_grant'),
  toPending: oauthError('authorization_pending'),
  toSlowDown: oauthError('slow_down'),
  toExpired: oauthError('expired_token'),
  toAccessDenied: oauthError('access_denied'),
}
