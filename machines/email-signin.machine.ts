/**
 * E-mail sign-in, the first factor. Two ways in:
 *
 * - **Request** (POST /signin/:provider): normalise and throttle the address → find the user → ask
 *   the `signIn` callback (`email.verificationRequest: true`) → store the token's hash and send the
 *   message → the verify-request page. With one-time codes the flow then rests, sealed in a cookie
 *   of the browser that asked, until the code is typed there.
 * - **Link** (POST /callback/:provider from the "Sign in as …" page, or a GET in `direct` mode):
 *   consume the token once → find the user → hand the verified address to the sign-in completion.
 *
 * Secrets never enter the context in clear: the link's token travels only in its request event,
 * the code only in its; the context keeps their hashes.
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  EMAIL_SIGN_IN,
  guards,
  initialContext,
  outputs,
  type EmailSignInContext,
  type EmailSignInEvent,
  type EmailSignInTag,
} from './email-signin.logic.js'

export {
  EMAIL_SIGN_IN,
  EmailSignInContext,
  toVerifyRequest,
  type EmailSignInEvent,
  type EmailSignInTag,
  type PendingCode,
} from './email-signin.logic.js'

/**
 * The e-mail sign-in machine: the notation the diagrams, the model-based tests and the chart
 * compiler read; what it computes is in `email-signin.logic.ts`.
 */
export const emailSignInMachine = setup({
  types: {} as { context: EmailSignInContext; events: EmailSignInEvent; tags: EmailSignInTag },
  guards,
  actions: {
    rememberRequest: assign(assignments.rememberRequest),
    rememberIdentifier: assign(assignments.rememberIdentifier),
    rememberUser: assign(assignments.rememberUser),
    rememberSignInRedirect: assign(assignments.rememberSignInRedirect),
    rememberVerifyRequest: assign(assignments.rememberVerifyRequest),
    rememberPendingCode: assign(assignments.rememberPendingCode),
    rejectCode: assign(assignments.rejectCode),
    recordDenial: assign(assignments.recordDenial),
  },
}).createMachine({
  id: EMAIL_SIGN_IN,
  version: '1',
  description: 'Signs a user in with a link (or a one-time code) sent to their e-mail address.',
  initial: 'idle',
  context: initialContext,
  output: outputs.finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description:
        'An address is posted (POST /signin/:provider), or a link confirmed (POST /callback/:provider; a GET only shows the confirmation page unless `link: "direct"`).',
      on: {
        'email.request': { target: 'admittingRequest', actions: 'rememberRequest' },
        'email.verifyLink': { target: 'consumingToken', actions: 'rememberRequest' },
      },
    },
    admittingRequest: {
      tags: 'effect.admitRequest',
      description: 'Normalises the address (normalizeIdentifier) and counts the send against its limits.',
      on: {
        'admitRequest.done': { target: 'findingUser', actions: 'rememberIdentifier' },
        'admitRequest.failed': { target: 'refused', actions: 'recordDenial' },
      },
    },
    findingUser: {
      tags: 'effect.lookUpUser',
      description: 'Finds the user with this address (getUserByEmail), or makes up a new one.',
      on: {
        'lookUpUser.done': { target: 'checkingSignIn', actions: 'rememberUser' },
        'lookUpUser.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    checkingSignIn: {
      tags: 'effect.checkSignIn',
      description: 'Asks the `signIn` callback, with `email.verificationRequest: true`, before sending.',
      on: {
        'checkSignIn.done': [
          { guard: 'hasSignInRedirect', target: 'redirectedBySignIn', actions: 'rememberSignInRedirect' },
          { target: 'sendingVerification' },
        ],
        'checkSignIn.failed': { target: 'denied', actions: 'recordDenial' },
      },
    },
    sendingVerification: {
      tags: 'effect.sendVerificationRequest',
      description: "Stores the token's hash (createVerificationToken) and sends the link (and code).",
      on: {
        'sendVerificationRequest.done': [
          { guard: 'hasCode', target: 'awaitingCode', actions: 'rememberPendingCode' },
          { target: 'linkSent', actions: 'rememberVerifyRequest' },
        ],
        'sendVerificationRequest.failed': [
          { guard: 'isNotSent', target: 'refused', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    awaitingCode: {
      tags: 'awaitsRequest',
      description: 'The message is sent; this browser may type the code (POST /callback/:provider, CSRF-checked).',
      meta: { outcome: outputs.toVerifyRequest },
      on: { 'email.submitCode': { target: 'checkingCode' } },
    },
    checkingCode: {
      tags: 'effect.checkCode',
      description: 'Counts the attempt on the server, then compares the code with its hash.',
      on: {
        'checkCode.done': { target: 'consumingToken' },
        'checkCode.failed': [
          { guard: 'isCodeWrong', target: 'awaitingCode', actions: 'rejectCode' },
          { guard: 'isCodeExhausted', target: 'voidingToken', actions: 'recordDenial' },
          { target: 'invalidToken', actions: 'recordDenial' },
        ],
      },
    },
    voidingToken: {
      tags: 'effect.voidToken',
      description: 'Too many wrong codes: spends the token, so neither the code nor the link works.',
      on: { 'voidToken.done': { target: 'invalidToken' } },
    },
    consumingToken: {
      tags: 'effect.consumeToken',
      description: 'Uses the token once (useVerificationToken): unknown, used, expired or foreign fails.',
      on: {
        'consumeToken.done': { target: 'findingVerifiedUser', actions: 'rememberIdentifier' },
        'consumeToken.failed': [
          { guard: 'isTokenInvalid', target: 'invalidToken', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    findingVerifiedUser: {
      tags: 'effect.lookUpUser',
      description: 'Finds the user with the verified address (getUserByEmail), or makes up a new one.',
      on: {
        'lookUpUser.done': { target: 'verified', actions: 'rememberUser' },
        'lookUpUser.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    linkSent: {
      type: 'final',
      description: 'The link is on its way: the verify-request page.',
      output: outputs.toLinkSent,
    },
    verified: {
      type: 'final',
      description: 'The address is verified: hand over to the sign-in completion.',
      output: outputs.toCompletion,
    },
    redirectedBySignIn: {
      type: 'final',
      description: 'The `signIn` callback returned a URL: redirect there, nothing sent.',
      output: outputs.toSignInRedirect,
    },
    denied: {
      type: 'final',
      description: 'The `signIn` callback refused: `AccessDenied`, nothing sent.',
      output: outputs.toDenial,
    },
    refused: {
      type: 'final',
      description: 'A bad address, too many sends, or a failed send: back to sign-in with `EmailSignin`.',
      output: outputs.toDenial,
    },
    invalidToken: {
      type: 'final',
      description: 'The link or code is unknown, used, expired or exhausted: the `Verification` error.',
      output: outputs.toDenial,
    },
    failed: {
      type: 'final',
      description: 'Something unexpected failed: the Configuration error (reason logged).',
      output: outputs.toDenial,
    },
  },
})
