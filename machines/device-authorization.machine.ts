/**
 * The device authorization grant (RFC 8628), one request at a time; the device request's own
 * lifecycle (pending → approved | denied | expired → redeemed) is kept in the shared store and
 * moved by the states that settle it:
 *
 * - request: a known client asks for codes → a device code and a user code, pending;
 * - poll: the device presents its device code → authorization pending, or slow down (polled
 *   before its interval: the interval grows), or the request's end (denied, expired), or, once
 *   approved, its credential, redeemed once (a compare-and-set claim);
 * - approve / deny: the signed-in user enters the user code (counted per user and per address)
 *   → the request settled once.
 *
 * Only `redeeming` gives the device anything, and every path to it passes `checkingPoll` finding
 * the request approved: the graph check in the tests holds the chart to it.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  DEVICE_AUTHORIZATION,
  guards,
  initialContext,
  ISSUES_CREDENTIAL_TAG,
  outputs,
  type DeviceAuthorizationContext,
  type DeviceAuthorizationEvent,
  type DeviceAuthorizationTag,
} from './device-authorization.logic.js'

export {
  DEVICE_AUTHORIZATION,
  DeviceAuthorizationContext,
  ISSUES_CREDENTIAL_TAG,
  type DeviceAuthorizationEvent,
  type DeviceAuthorizationTag,
} from './device-authorization.logic.js'

const unavailable = { target: '#device-authorization.failed', actions: 'recordDenial' } as const

/** Builds the device authorization machine. */
export const buildDeviceAuthorization = () =>
  setup({
    types: {} as { context: DeviceAuthorizationContext; events: DeviceAuthorizationEvent; tags: DeviceAuthorizationTag },
    guards,
    actions: {
      rememberRequest: assign(assignments.rememberRequest),
      rememberPoll: assign(assignments.rememberPoll),
      rememberAnswer: assign(assignments.rememberAnswer),
      rememberIssued: assign(assignments.rememberIssued),
      rememberPollStatus: assign(assignments.rememberPollStatus),
      rememberRedeemed: assign(assignments.rememberRedeemed),
      rememberDevice: assign(assignments.rememberDevice),
      recordDenial: assign(assignments.recordDenial),
    },
  }).createMachine({
    id: DEVICE_AUTHORIZATION,
    version: '1',
    description:
      'Issues a device code and a user code to a known client, lets the signed-in user approve or deny it, and gives the polling device its credential once, after the approval.',
    initial: 'idle',
    context: initialContext,
    output: outputs.finalStateOutcome,
    states: {
      idle: {
        tags: 'awaitsRequest',
        description:
          'POST /device_authorization from a device, POST /oauth/token with the device code grant from a polling device, or POST /device with approve or deny from a signed-in user.',
        on: {
          'device.request': { target: 'requesting', actions: 'rememberRequest' },
          'device.poll': { target: 'polling', actions: 'rememberPoll' },
          'device.approve': { target: 'answering', actions: 'rememberAnswer' },
          'device.deny': { target: 'answering', actions: 'rememberAnswer' },
        },
      },
      requesting: {
        description: 'A device asks for codes.',
        initial: 'issuingCodes',
        states: {
          issuingCodes: {
            tags: 'effect.issueCodes',
            description:
              'Checks the client id and the scopes; stores the pending request under the keyed hash of a new device code, with where and when it was asked, and its user code.',
            on: {
              'issueCodes.done': { target: '#device-authorization.issued', actions: 'rememberIssued' },
              'issueCodes.failed': [
                { guard: 'isInvalidClient', target: '#device-authorization.invalidClient', actions: 'recordDenial' },
                { guard: 'isInvalidScope', target: '#device-authorization.invalidScope', actions: 'recordDenial' },
                unavailable,
              ],
            },
          },
        },
      },
      polling: {
        description: 'The device polls with its device code.',
        initial: 'checkingPoll',
        states: {
          checkingPoll: {
            tags: 'effect.checkPoll',
            description:
              "Finds the request by the device code's keyed hash, for this client only; claims the poll for the interval (a poll within it slows the device down by 5 s).",
            on: {
              'checkPoll.done': [
                { guard: 'isApproved', target: 'redeeming', actions: 'rememberPollStatus' },
                { guard: 'isDenied', target: '#device-authorization.accessDenied', actions: 'rememberPollStatus' },
                { guard: 'isExpired', target: '#device-authorization.expiredToken', actions: 'rememberPollStatus' },
                { guard: 'isSlowDown', target: '#device-authorization.slowDown', actions: 'rememberPollStatus' },
                { target: '#device-authorization.authorizationPending', actions: 'rememberPollStatus' },
              ],
              'checkPoll.failed': [{ guard: 'isUnknown', target: '#device-authorization.invalidGrant', actions: 'recordDenial' }, unavailable],
            },
          },
          redeeming: {
            tags: ['effect.redeemDeviceCode', ISSUES_CREDENTIAL_TAG],
            description:
              'Claims the approved device code once (compare-and-set in the store), then issues the credential for the approving user: a session, as a cookie would carry it.',
            on: {
              'redeemDeviceCode.done': { target: '#device-authorization.redeemed', actions: 'rememberRedeemed' },
              'redeemDeviceCode.failed': [{ guard: 'isSpent', target: '#device-authorization.invalidGrant', actions: 'recordDenial' }, unavailable],
            },
          },
        },
      },
      answering: {
        description: "The signed-in user's answer to the code they entered: checked, then the request settled once.",
        initial: 'checkingUserCode',
        states: {
          checkingUserCode: {
            tags: 'effect.checkUserCode',
            description:
              'Counts the attempt per user and per address, then finds a pending request by the keyed hash of the user code; a wrong code tells nothing of any other.',
            on: {
              'checkUserCode.done': [
                { guard: 'isApproving', target: 'approving', actions: 'rememberDevice' },
                { target: 'denying', actions: 'rememberDevice' },
              ],
              'checkUserCode.failed': [
                { guard: 'isUnknown', target: '#device-authorization.refused', actions: 'recordDenial' },
                { guard: 'isLimited', target: '#device-authorization.limited', actions: 'recordDenial' },
                unavailable,
              ],
            },
          },
          approving: {
            tags: 'effect.approveDevice',
            description: 'Settles the request as approved by this user (once, a claim in the store); its user code is spent.',
            on: {
              'approveDevice.done': '#device-authorization.approved',
              'approveDevice.failed': [{ guard: 'isSettled', target: '#device-authorization.refused', actions: 'recordDenial' }, unavailable],
            },
          },
          denying: {
            tags: 'effect.denyDevice',
            description: 'Settles the request as denied (once, a claim in the store); its user code is spent.',
            on: {
              'denyDevice.done': '#device-authorization.denied',
              'denyDevice.failed': [{ guard: 'isSettled', target: '#device-authorization.refused', actions: 'recordDenial' }, unavailable],
            },
          },
        },
      },
      issued: { type: 'final', description: 'The codes are issued: 200 with the device code, the user code and where to enter it.', output: outputs.toIssued },
      invalidClient: { type: 'final', description: 'An unknown client id: 400 invalid_client (a public client has no credentials to challenge).', output: outputs.toInvalidClient },
      invalidScope: { type: 'final', description: 'A malformed scope: 400 invalid_scope.', output: outputs.toInvalidScope },
      authorizationPending: { type: 'final', description: 'Not answered yet: 400 authorization_pending.', output: outputs.toPending },
      slowDown: { type: 'final', description: 'Polled before the interval: 400 slow_down, the interval 5 s longer.', output: outputs.toSlowDown },
      accessDenied: { type: 'final', description: 'The user denied it: 400 access_denied.', output: outputs.toAccessDenied },
      expiredToken: { type: 'final', description: 'The codes outlived their lifetime: 400 expired_token.', output: outputs.toExpired },
      invalidGrant: {
        type: 'final',
        description: "An unknown device code, another client's, or one already redeemed: 400 invalid_grant.",
        output: outputs.toInvalidGrant,
      },
      redeemed: { type: 'final', description: 'The device has its credential: 200 with the access token, once.', output: outputs.toRedeemed },
      approved: { type: 'final', description: 'The user approved the request: the device gets its credential at its next poll.', output: outputs.toAnswered },
      denied: { type: 'final', description: 'The user denied the request: the device is told access_denied.', output: outputs.toAnswered },
      refused: {
        type: 'final',
        description: 'A user code that names no pending request (wrong, expired, or answered already): nothing changed.',
        output: outputs.toRefusal,
      },
      limited: { type: 'final', description: 'Too many codes entered by this user or from this address: 429 with `retryAfter`.', output: outputs.toRefusal },
      failed: { type: 'final', description: 'The store or the adapter failed: 503 with Retry-After, nothing issued.', output: outputs.toUnavailable },
    },
  })

/** The device authorization machine; marked pure, so a bundle that never reads it does not build it. */
export const deviceAuthorizationMachine = /* @__PURE__ */ buildDeviceAuthorization()
