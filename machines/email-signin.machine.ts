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
import { boolean, nullable, number, object, record, string, unknown, type Infer } from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { ErrorType } from './shared/errors.js'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { denialOf, finalStateOutcome, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.machine.js'

const Denial = object({ error: string(), code: nullable(string()) })
const Json = record(string(), unknown())

/** Context of the e-mail machine; what rests in the cookie while a code is awaited. */
export const EmailSignInContext = object({
  providerId: string(),
  callbackUrl: string(),
  /** The normalised address (after the request), or the token's identifier (after the link). */
  identifier: nullable(string()),
  /** The user the callbacks see: the stored user, or a new one with a fresh id. */
  user: nullable(Json),
  storedUser: nullable(Json),
  /** Codes only: the hash of the token the code stands for (what the adapter stores). */
  tokenHash: nullable(string()),
  /** Codes only: the code's hash, bound to `tokenHash`. */
  codeHash: nullable(string()),
  /** Codes only: when the token and its code expire, epoch seconds. */
  expires: number(),
  verifyRequestUrl: string(),
  /** The last code typed was wrong: the verify-request page says so. */
  codeRejected: boolean(),
  redirect: nullable(string()),
  denial: nullable(Denial),
})
export type EmailSignInContext = Infer<typeof EmailSignInContext>

/** What the send effect leaves for a code: the hashes and the expiry. */
export interface PendingCode {
  tokenHash: string
  codeHash: string
  expires: number
}

/** Events of the e-mail machine. */
export type EmailSignInEvent =
  | ({ type: 'email.request'; providerId: string; callbackUrl: string; email: string | null } & Timestamped)
  | ({
      type: 'email.verifyLink'
      providerId: string
      callbackUrl: string
      /** The link's token in clear: read by the consume effect, never assigned. */
      token: string
      email: string | null
    } & Timestamped)
  | ({ type: 'email.submitCode'; /** Never assigned. */ code: string } & Timestamped)
  | EffectResult<'admitRequest', { identifier: string }, 'invalidIdentifier' | 'throttled'>
  | EffectResult<'lookUpUser', { user: Record<string, unknown>; stored: boolean }, 'threw'>
  | EffectResult<'checkSignIn', { redirect: string | null }, 'denied'>
  | EffectResult<
      'sendVerificationRequest',
      { verifyRequestUrl: string; code: PendingCode | null },
      'notSent' | 'threw'
    >
  | EffectResult<'checkCode', null, 'wrong' | 'exhausted' | 'expired'>
  | EffectDone<'voidToken', null>
  | EffectResult<'consumeToken', { identifier: string }, 'invalid' | 'missingToken' | 'threw'>

/** Tags: effect states and the resting states. */
export type EmailSignInTag =
  | 'awaitsRequest'
  | 'effect.admitRequest'
  | 'effect.lookUpUser'
  | 'effect.checkSignIn'
  | 'effect.sendVerificationRequest'
  | 'effect.checkCode'
  | 'effect.voidToken'
  | 'effect.consumeToken'

const initialContext: EmailSignInContext = {
  providerId: '',
  callbackUrl: '',
  identifier: null,
  user: null,
  storedUser: null,
  tokenHash: null,
  codeHash: null,
  expires: 0,
  verifyRequestUrl: '',
  codeRejected: false,
  redirect: null,
  denial: null,
}

type Mapper = (args: { context: EmailSignInContext }) => FlowOutcome

/** The resting outcome: the verify-request page (saying so when the last code was wrong). */
export function toVerifyRequest(context: EmailSignInContext): FlowOutcome {
  return {
    type: 'redirect',
    url: context.codeRejected ? `${context.verifyRequestUrl}&error=InvalidCode` : context.verifyRequestUrl,
  }
}
const toLinkSent: Mapper = ({ context }) => toVerifyRequest(context)
const toCompletion: Mapper = ({ context }) => {
  const user = context.user!
  return {
    type: 'handoff',
    flow: SIGN_IN_COMPLETION,
    identity: {
      firstFactor: 'email-signin',
      providerId: context.providerId,
      callbackUrl: context.callbackUrl,
      user,
      // Auth.js's account for e-mail: never stored (no Account row is linked for e-mail).
      account: {
        providerAccountId: String(user.email),
        userId: String(user.id),
        type: 'email',
        provider: context.providerId,
      },
      profile: null,
      storedUser: context.storedUser,
      // Verifying an address always stores the user (created, or `emailVerified` updated).
      persist: true,
      credentials: null,
      claims: null,
    },
  }
}
const toSignInRedirect: Mapper = ({ context }) => ({ type: 'redirect', url: context.redirect! })
const toDenial: Mapper = ({ context }) => ({
  type: 'error',
  error: (context.denial?.error ?? 'Configuration') as ErrorType,
  ...(context.denial?.code ? { code: context.denial.code } : {}),
})

/** The e-mail sign-in machine. */
export const emailSignInMachine = setup({
  types: {} as { context: EmailSignInContext; events: EmailSignInEvent; tags: EmailSignInTag },
  guards: {
    hasSignInRedirect: ({ event }) => {
      assertEvent(event, 'checkSignIn.done')
      return event.output.redirect !== null
    },
    hasCode: ({ event }) => {
      assertEvent(event, 'sendVerificationRequest.done')
      return event.output.code !== null
    },
    isNotSent: ({ event }) => {
      assertEvent(event, 'sendVerificationRequest.failed')
      return event.reason === 'notSent'
    },
    isCodeWrong: ({ event }) => {
      assertEvent(event, 'checkCode.failed')
      return event.reason === 'wrong'
    },
    isCodeExhausted: ({ event }) => {
      assertEvent(event, 'checkCode.failed')
      return event.reason === 'exhausted'
    },
    isTokenInvalid: ({ event }) => {
      assertEvent(event, 'consumeToken.failed')
      return event.reason === 'invalid'
    },
  },
  actions: {
    rememberRequest: assign(({ event }) => {
      assertEvent(event, ['email.request', 'email.verifyLink'])
      return { providerId: event.providerId, callbackUrl: event.callbackUrl }
    }),
    rememberIdentifier: assign(({ event }) => {
      assertEvent(event, ['admitRequest.done', 'consumeToken.done'])
      return { identifier: event.output.identifier }
    }),
    rememberUser: assign(({ event }) => {
      assertEvent(event, 'lookUpUser.done')
      return { user: event.output.user, storedUser: event.output.stored ? event.output.user : null }
    }),
    rememberSignInRedirect: assign(({ event }) => {
      assertEvent(event, 'checkSignIn.done')
      return { redirect: event.output.redirect }
    }),
    rememberVerifyRequest: assign(({ event }) => {
      assertEvent(event, 'sendVerificationRequest.done')
      return { verifyRequestUrl: event.output.verifyRequestUrl }
    }),
    // What rests in the cookie: hashes only, and no user record (it is looked up again).
    rememberPendingCode: assign(({ event }) => {
      assertEvent(event, 'sendVerificationRequest.done')
      const code = event.output.code!
      return {
        verifyRequestUrl: event.output.verifyRequestUrl,
        tokenHash: code.tokenHash,
        codeHash: code.codeHash,
        expires: code.expires,
        user: null,
        storedUser: null,
      }
    }),
    rejectCode: assign({ codeRejected: true }),
    recordDenial: assign(({ event }) => ({ denial: denialOf(event) })),
  },
}).createMachine({
  id: 'email-signin',
  version: '1',
  description: 'Signs a user in with a link (or a one-time code) sent to their e-mail address.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
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
      meta: { outcome: toVerifyRequest },
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
      output: toLinkSent,
    },
    verified: {
      type: 'final',
      description: 'The address is verified: hand over to the sign-in completion.',
      output: toCompletion,
    },
    redirectedBySignIn: {
      type: 'final',
      description: 'The `signIn` callback returned a URL: redirect there, nothing sent.',
      output: toSignInRedirect,
    },
    denied: {
      type: 'final',
      description: 'The `signIn` callback refused: `AccessDenied`, nothing sent.',
      output: toDenial,
    },
    refused: {
      type: 'final',
      description: 'A bad address, too many sends, or a failed send: back to sign-in with `EmailSignin`.',
      output: toDenial,
    },
    invalidToken: {
      type: 'final',
      description: 'The link or code is unknown, used, expired or exhausted: the `Verification` error.',
      output: toDenial,
    },
    failed: {
      type: 'final',
      description: 'Something unexpected failed: the Configuration error (reason logged).',
      output: toDenial,
    },
  },
})
