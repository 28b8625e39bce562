/**
 * Passkeys (WebAuthn), the first factor, both ceremonies in one chart: the options request finds
 * who is asking (the signed-in user, or the e-mail address typed in) and decides, by Auth.js's
 * rules, between registering a new passkey and authenticating with one → the challenge rests sealed
 * in the challenge cookie, bound to the provider, while the browser talks to the authenticator →
 * the browser's answer spends the challenge once (also in the server-side store, so a replayed
 * envelope fails on every instance) → the attestation, or the assertion against the stored
 * authenticator and its counter, is verified → the verified user (and a new passkey to store) is
 * handed to the sign-in completion.
 *
 * A sign-up (a new user, nobody signed in) while an e-mail provider is configured first verifies
 * the address typed in: a one-time code goes out through the e-mail flow's mailer, limits and code
 * checks, and only a right code, typed in this browser, leads to the registration options. The user
 * is then stored with the address verified. Without an e-mail provider nothing can verify it, and
 * the user is stored unverified (which no other way of signing in then adopts by its address).
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  guards,
  initialContext,
  outputs,
  WEBAUTHN_SIGN_IN,
  type WebAuthnSignInContext,
  type WebAuthnSignInEvent,
  type WebAuthnSignInTag,
} from './webauthn-signin.logic.js'

export {
  decideCeremony,
  isSignUp,
  toCeremonyOptions,
  toCodeRequest,
  WEBAUTHN_SIGN_IN,
  WebAuthnCeremony,
  WebAuthnSignInContext,
  type CeremonyOptions,
  type FoundUser,
  type SentCode,
  type WebAuthnSignInEvent,
  type WebAuthnSignInTag,
} from './webauthn-signin.logic.js'

/** A refusal (the answer, or a request before it, is at fault) is rejected; an outage failed. */
const rejectedOrFailed = [
  { guard: 'isRefusal', target: 'rejected', actions: 'recordDenial' },
  { target: 'failed', actions: 'recordDenial' },
] as const

/**
 * The WebAuthn (passkey) machine: the notation the diagrams, the model-based tests and the chart
 * compiler read; what it computes is in `webauthn-signin.logic.ts`.
 */
export const webauthnSignInMachine = setup({
  types: {} as { context: WebAuthnSignInContext; events: WebAuthnSignInEvent; tags: WebAuthnSignInTag },
  guards,
  actions: {
    rememberRequest: assign(assignments.rememberRequest),
    rememberUser: assign(assignments.rememberUser),
    rememberAddress: assign(assignments.rememberAddress),
    rememberSentCode: assign(assignments.rememberSentCode),
    rejectCode: assign(assignments.rejectCode),
    markAddressVerified: assign(assignments.markAddressVerified),
    chooseAuthentication: assign(assignments.chooseAuthentication),
    chooseRegistration: assign(assignments.chooseRegistration),
    rememberOptions: assign(assignments.rememberOptions),
    rememberAnswer: assign(assignments.rememberAnswer),
    rememberAuthenticator: assign(assignments.rememberAuthenticator),
    rememberCounter: assign(assignments.rememberCounter),
    rememberAccount: assign(assignments.rememberAccount),
    rememberEnrolment: assign(assignments.rememberEnrolment),
    recordDenial: assign(assignments.recordDenial),
  },
}).createMachine({
  id: WEBAUTHN_SIGN_IN,
  version: '2',
  description: 'Registers a passkey or signs in with one (WebAuthn), then hands over to the sign-in completion.',
  initial: 'idle',
  context: initialContext,
  output: outputs.finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description:
        "The browser asks for options: Auth.js's GET /webauthn-options/:provider?action=…, or the built-in page's CSRF-checked POST.",
      on: {
        'webauthn.options': [
          { guard: 'isUnknownAction', target: 'invalidAction' },
          { target: 'findingUser', actions: 'rememberRequest' },
        ],
      },
    },
    findingUser: {
      tags: 'effect.findUser',
      description: "Finds the signed-in user, or the user of the e-mail address asked about (getUserInfo).",
      on: {
        'findUser.done': [
          {
            guard: 'isAuthenticationDecided',
            target: 'creatingAuthenticationOptions',
            actions: ['rememberUser', 'chooseAuthentication'],
          },
          {
            guard: 'isVerifiableSignUp',
            target: 'admittingAddress',
            actions: ['rememberUser', 'chooseRegistration'],
          },
          { guard: 'isSignUpToVerify', target: 'verificationRequired' },
          {
            guard: 'isRegistrationDecided',
            target: 'creatingRegistrationOptions',
            actions: ['rememberUser', 'chooseRegistration'],
          },
          { target: 'undecided' },
        ],
        'findUser.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    admittingAddress: {
      tags: 'effect.admitAddress',
      description: "A sign-up to verify: normalises the address and counts the send against the e-mail provider's limits.",
      on: {
        'admitAddress.done': { target: 'sendingCode', actions: 'rememberAddress' },
        'admitAddress.failed': { target: 'codeNotSent', actions: 'recordDenial' },
      },
    },
    sendingCode: {
      tags: 'effect.sendCode',
      description: "Stores an e-mail token's hash and sends its link and a one-time code through the e-mail provider.",
      on: {
        'sendCode.done': { target: 'awaitingCode', actions: 'rememberSentCode' },
        'sendCode.failed': [
          { guard: 'isSendRefused', target: 'codeNotSent', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    awaitingCode: {
      tags: 'awaitsRequest',
      description: 'The code is on its way; this browser may type it (POST /webauthn-options/:provider, CSRF-checked).',
      meta: { outcome: outputs.toCodeRequest },
      on: { 'webauthn.code': { target: 'checkingCode' } },
    },
    checkingCode: {
      tags: 'effect.checkCode',
      description: 'Counts the attempt on the server, then compares the code with its hash.',
      on: {
        'checkCode.done': { target: 'spendingToken' },
        'checkCode.failed': [
          { guard: 'isCodeWrong', target: 'awaitingCode', actions: 'rejectCode' },
          { guard: 'isCodeExhausted', target: 'voidingToken', actions: 'recordDenial' },
          { target: 'codeRefused', actions: 'recordDenial' },
        ],
      },
    },
    voidingToken: {
      tags: 'effect.voidToken',
      description: "Too many wrong codes: spends the e-mail token, so neither the code nor the message's link works.",
      on: { 'voidToken.done': { target: 'codeRefused' } },
    },
    spendingToken: {
      tags: 'effect.spendToken',
      description: 'Uses the e-mail token once (useVerificationToken): the address is verified, the link spent with it.',
      on: {
        'spendToken.done': { target: 'creatingRegistrationOptions', actions: 'markAddressVerified' },
        'spendToken.failed': [
          { guard: 'isTokenSpent', target: 'codeRefused', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    creatingAuthenticationOptions: {
      tags: 'effect.createAuthenticationOptions',
      description: "Creates a challenge and request options, allowing the known user's passkeys.",
      on: {
        'createAuthenticationOptions.done': { target: 'awaitingAnswer', actions: 'rememberOptions' },
        'createAuthenticationOptions.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    creatingRegistrationOptions: {
      tags: 'effect.createRegistrationOptions',
      description: "Creates a challenge and creation options, excluding the user's existing passkeys.",
      on: {
        'createRegistrationOptions.done': { target: 'awaitingAnswer', actions: 'rememberOptions' },
        'createRegistrationOptions.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    awaitingAnswer: {
      tags: 'awaitsRequest',
      description: 'The browser runs the ceremony with the authenticator; the flow waits sealed in the challenge cookie.',
      meta: { outcome: outputs.toCeremonyOptions },
      on: { 'webauthn.answer': { target: 'spendingChallenge', actions: 'rememberAnswer' } },
    },
    spendingChallenge: {
      tags: 'effect.spendChallenge',
      description:
        "Refuses an answer for the other ceremony, then spends the challenge in the server-side store (single use on every instance).",
      on: {
        'spendChallenge.done': [
          { guard: 'isRegistering', target: 'verifyingAttestation' },
          { target: 'findingAuthenticator' },
        ],
        'spendChallenge.failed': rejectedOrFailed,
      },
    },
    findingAuthenticator: {
      tags: 'effect.findAuthenticator',
      description: 'Finds the stored authenticator of the credential the assertion names.',
      on: {
        'findAuthenticator.done': { target: 'verifyingAssertion', actions: 'rememberAuthenticator' },
        'findAuthenticator.failed': rejectedOrFailed,
      },
    },
    verifyingAssertion: {
      tags: 'effect.verifyAssertion',
      description: 'Verifies the signature, challenge, origin, RP id, user presence and that the counter grew.',
      on: {
        'verifyAssertion.done': { target: 'updatingCounter', actions: 'rememberCounter' },
        'verifyAssertion.failed': { target: 'rejected', actions: 'recordDenial' },
      },
    },
    updatingCounter: {
      tags: 'effect.updateCounter',
      description: "Stores the authenticator's new signature counter.",
      on: {
        'updateCounter.done': { target: 'findingAccount' },
        'updateCounter.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    findingAccount: {
      tags: 'effect.findAccount',
      description: "Finds the passkey's account and its user (getAccount, getUser).",
      on: {
        'findAccount.done': { target: 'verified', actions: 'rememberAccount' },
        'findAccount.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    verifyingAttestation: {
      tags: 'effect.verifyAttestation',
      description: 'Verifies the new passkey: challenge, origin, RP id, user presence, its public key.',
      on: {
        'verifyAttestation.done': { target: 'verified', actions: 'rememberEnrolment' },
        'verifyAttestation.failed': { target: 'rejected', actions: 'recordDenial' },
      },
    },
    verified: {
      type: 'final',
      description: 'The passkey vouched for the user: hand over to the sign-in completion (new passkeys stored there).',
      output: outputs.toCompletion,
    },
    invalidAction: {
      type: 'final',
      description: 'The action is neither register nor authenticate: 400 {"error":"Invalid action"}.',
      output: outputs.toInvalidAction,
    },
    undecided: {
      type: 'final',
      description: 'The rules allow no ceremony for this request: 400 {"error":"Invalid request"}.',
      output: outputs.toInvalidRequest,
    },
    verificationRequired: {
      type: 'final',
      description:
        'A sign-up to verify asked without a CSRF-checked POST, which alone may send e-mail: 400 {"error":"Email verification required"}.',
      output: outputs.toVerificationRequired,
    },
    codeNotSent: {
      type: 'final',
      description: 'A bad address, too many sends, or a failed send: 400 {"error":"The e-mail could not be sent"}.',
      output: outputs.toCodeNotSent,
    },
    codeRefused: {
      type: 'final',
      description: 'The code expired, was used, or was got wrong too often: 400 {"error":"The code is no longer valid"}.',
      output: outputs.toCodeRefused,
    },
    rejected: {
      type: 'final',
      description: 'The answer was refused (replayed, mismatched, unknown, forged): WebAuthnVerificationError.',
      output: outputs.toDenial,
    },
    failed: {
      type: 'final',
      description: 'Something unexpected failed (the database): the Configuration error (reason logged).',
      output: outputs.toDenial,
    },
  },
})
