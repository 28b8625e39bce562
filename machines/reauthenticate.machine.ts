/**
 * Step-up re-authentication: a signed-in user whose proof is too old for a sensitive action proves
 * a factor again — the password, a one-time code (TOTP or backup code), a code sent to the
 * account's e-mail address, an assertion by one of the user's own passkeys, or a new login at an
 * OpenID provider the user's account is linked to (`prompt=login`, `max_age=0`, its ID token's
 * `auth_time` checked) — without signing in anew. The same session is then marked verified (same session, no new cookie
 * family) and the action that asked is resumed once: its intent (route, method, fields minus
 * secrets) was sealed in this flow when the action was refused.
 *
 * Every proof is counted on the server, and the sealed flow is spent there on its one use (the
 * engine claims each envelope in the store): the cookie can be replayed by whoever holds it, the
 * store's counters and claims cannot.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  CodeProof,
  EmailCodeRequest,
  FederatedRequest,
  guards,
  initialContext,
  outputs,
  PasskeyOptionsRequest,
  PASSKEY_STEP,
  PROOF_STEP,
  REAUTHENTICATE,
  SESSION_MARKING_STATE,
  type ReauthenticateContext,
  type ReauthenticateEvent,
  type ReauthenticateTag,
} from './reauthenticate.logic.js'

export {
  CodeProof,
  EmailCodeRequest,
  FederatedProvider,
  FederatedRequest,
  Federation,
  Intent,
  PasskeyOptionsRequest,
  PasskeyProof,
  PasswordProof,
  REAUTHENTICATE,
  ReauthenticateContext,
  ReauthFactor,
  ReauthPolicy,
  SESSION_MARKING_STATE,
  type ReauthenticateEvent,
  type ReauthenticateTag,
} from './reauthenticate.logic.js'

/** A wrong proof goes back to the page (counted); anything else ends the flow. */
const proofFailure = [
  { guard: 'isWrongProof', target: 'awaitingProof', actions: 'recordWrongProof' },
  { target: 'failed', actions: 'recordDenial' },
] as const

/** The proofs the page offers, each only when the user has the factor. */
const proofRequests = {
  'reauth.password': { guard: 'offersPassword', target: 'checkingPassword' },
  'reauth.code': { guard: 'offersCode', target: 'checkingCode' },
  'reauth.sendEmailCode': { guard: 'offersEmail', target: 'sendingEmailCode' },
  'reauth.emailCode': { guard: 'awaitsEmailCode', target: 'checkingEmailCode' },
  'reauth.passkeyOptions': { guard: 'offersPasskey', target: 'creatingPasskeyOptions' },
  'reauth.federated': { guard: 'offersProvider', target: 'creatingAuthorizationRequest' },
} as const

/**
 * Builds the re-authentication machine: the notation the diagrams, the model-based tests and the
 * chart compiler read (the engine runs the compiled chart).
 */
export const buildReauthenticate = () => setup({
  types: {} as { context: ReauthenticateContext; events: ReauthenticateEvent; tags: ReauthenticateTag },
  guards,
  actions: {
    rememberStart: assign(assignments.rememberStart),
    rememberUser: assign(assignments.rememberUser),
    recordWrongProof: assign(assignments.recordWrongProof),
    rememberPasskeyOptions: assign(assignments.rememberPasskeyOptions),
    rememberEmailSent: assign(assignments.rememberEmailSent),
    rememberFederation: assign(assignments.rememberFederation),
    recordNotSent: assign(assignments.recordNotSent),
    rememberProof: assign(assignments.rememberProof),
    rememberSession: assign(assignments.rememberSession),
    recordDenial: assign(assignments.recordDenial),
  },
}).createMachine({
  id: REAUTHENTICATE,
  version: '4',
  description:
    'Step-up: the signed-in user proves a factor again (password, one-time code, e-mailed code, passkey, a new login at a linked OpenID provider); the same session is marked verified and the action that asked resumes once.',
  initial: 'idle',
  context: initialContext,
  output: outputs.finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'A sensitive action found the proof too old: its intent and the policy start the flow.',
      on: { 'reauth.start': { target: 'findingFactors', actions: 'rememberStart' } },
    },
    findingFactors: {
      tags: 'effect.findFactors',
      description: 'Reads the live session (the one authority) and the factors its user can prove that the policy accepts.',
      on: {
        'findFactors.done': { target: 'awaitingProof', actions: 'rememberUser' },
        'findFactors.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    awaitingProof: {
      tags: 'awaitsRequest',
      description: 'The page "Confirm it\'s you": the user\'s factors; waits, sealed, for a proof (POST /step/reauthenticate).',
      meta: { outcome: outputs.toStepPage, step: PROOF_STEP },
      on: { ...proofRequests },
    },
    creatingPasskeyOptions: {
      tags: 'effect.createPasskeyOptions',
      description: "Creates a challenge and assertion options that allow the signed-in user's own passkeys only.",
      on: {
        'createPasskeyOptions.done': { target: 'awaitingPasskey', actions: 'rememberPasskeyOptions' },
        'createPasskeyOptions.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    awaitingPasskey: {
      tags: 'awaitsRequest',
      description:
        "The browser has the options and asks the authenticator; waits, sealed with the challenge, for the assertion (or another proof from the page).",
      meta: {
        outcome: outputs.toPasskeyOptions,
        step: PASSKEY_STEP,
      },
      on: { ...proofRequests, 'reauth.passkey': { target: 'checkingPasskey' } },
    },
    creatingAuthorizationRequest: {
      tags: 'effect.createAuthorizationRequest',
      description:
        "Builds the login request to one of the user's OpenID providers with `prompt=login` and `max_age=0`, and a fresh state, PKCE verifier and nonce sealed in this flow.",
      on: {
        'createAuthorizationRequest.done': { target: 'awaitingProvider', actions: 'rememberFederation' },
        'createAuthorizationRequest.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    awaitingProvider: {
      tags: 'awaitsRequest',
      description:
        'The user logs in again at the provider; waits, sealed, for its answer at the registered callback (routed here by the sealed state), or another proof from the page.',
      meta: { outcome: outputs.toProvider, step: PROOF_STEP },
      on: { ...proofRequests, 'reauth.callback': { target: 'checkingFederated' } },
    },
    checkingFederated: {
      tags: 'effect.verifyFederated',
      description:
        "Counted; validates the callback and exchanges the code as the sign-in does; the ID token's `auth_time` must be no older than the request and its `sub` this user's account at the provider.",
      on: { 'verifyFederated.done': { target: SESSION_MARKING_STATE, actions: 'rememberProof' }, 'verifyFederated.failed': [...proofFailure] },
    },
    checkingPasskey: {
      tags: 'effect.verifyPasskey',
      description:
        "Spends the challenge, checks the assertion is by a passkey of the signed-in user (RP id, origin, signature), counted; stores its counter.",
      on: { 'verifyPasskey.done': { target: SESSION_MARKING_STATE, actions: 'rememberProof' }, 'verifyPasskey.failed': [...proofFailure] },
    },
    checkingPassword: {
      tags: 'effect.verifyPassword',
      description:
        "Admits the attempt (the credentials sign-in's rate limits), asks `authorize`; the user it returns must be the signed-in one.",
      on: { 'verifyPassword.done': { target: SESSION_MARKING_STATE, actions: 'rememberProof' }, 'verifyPassword.failed': [...proofFailure] },
    },
    checkingCode: {
      tags: 'effect.verifyCode',
      description: "Checks a TOTP or backup code of the signed-in user, counted like the sign-in's second factor.",
      on: { 'verifyCode.done': { target: SESSION_MARKING_STATE, actions: 'rememberProof' }, 'verifyCode.failed': [...proofFailure] },
    },
    sendingEmailCode: {
      tags: 'effect.sendEmailCode',
      description: "Sends a new code to the signed-in account's own address (a few per re-authentication); only its hash is kept, in the store.",
      on: {
        'sendEmailCode.done': { target: 'awaitingProof', actions: 'rememberEmailSent' },
        'sendEmailCode.failed': [
          { guard: 'isNotSent', target: 'awaitingProof', actions: 'recordNotSent' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    checkingEmailCode: {
      tags: 'effect.verifyEmailCode',
      description: 'Checks the e-mailed code against its hash in the store, counted; a right code is spent.',
      on: { 'verifyEmailCode.done': { target: SESSION_MARKING_STATE, actions: 'rememberProof' }, 'verifyEmailCode.failed': [...proofFailure] },
    },
    [SESSION_MARKING_STATE]: {
      tags: 'effect.markVerified',
      description:
        'Checks that the same live session of the same user asks, then records the proof in it: the JWT re-issued with its claims kept, or the database row updated.',
      on: {
        'markVerified.done': { target: 'resumed', actions: 'rememberSession' },
        'markVerified.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    resumed: {
      type: 'final',
      description: 'The action resumes, once: a redirect to the page that asked, or its form posted again.',
      output: outputs.toResumption,
    },
    failed: {
      type: 'final',
      description:
        'Signed out or another session by now, too many wrong proofs, or a store failure: the error page.',
      output: outputs.toFailure,
    },
  },
})

/** The re-authentication machine; marked pure, so a bundle that never reads it does not build it. */
export const reauthenticateMachine = /* @__PURE__ */ buildReauthenticate()
