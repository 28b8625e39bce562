/**
 * The e-mail sign-in chart's logic: its id, context, events, guards, assignments and outputs, in
 * plain functions (see `shared/logic.ts`). The chart is `email-signin.machine.ts`.
 *
 * @module
 */
import { boolean, nullable, number, object, record, string, unknown, type Infer } from 'superstruct'
import type { ErrorType } from './shared/errors.js'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { denialOf, finalStateOutcome, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.logic.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The e-mail sign-in chart's id. */
export const EMAIL_SIGN_IN = 'email-signin'

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

/** The context an e-mail sign-in starts from. */
export const initialContext: EmailSignInContext = {
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

type EmailGuard = Guard<EmailSignInContext, EmailSignInEvent>
type EmailAssignment = Assignment<EmailSignInContext, EmailSignInEvent>

/** The chart's guards. */
export const guards = {
  hasSignInRedirect: ({ event }) => {
    expectEvent(event, 'checkSignIn.done')
    return event.output.redirect !== null
  },
  hasCode: ({ event }) => {
    expectEvent(event, 'sendVerificationRequest.done')
    return event.output.code !== null
  },
  isNotSent: ({ event }) => {
    expectEvent(event, 'sendVerificationRequest.failed')
    return event.reason === 'notSent'
  },
  isCodeWrong: ({ event }) => {
    expectEvent(event, 'checkCode.failed')
    return event.reason === 'wrong'
  },
  isCodeExhausted: ({ event }) => {
    expectEvent(event, 'checkCode.failed')
    return event.reason === 'exhausted'
  },
  isTokenInvalid: ({ event }) => {
    expectEvent(event, 'consumeToken.failed')
    return event.reason === 'invalid'
  },
} satisfies Record<string, EmailGuard>

/** The chart's assignments. */
export const assignments = {
  rememberRequest: ({ event }) => {
    expectEvent(event, ['email.request', 'email.verifyLink'])
    return { providerId: event.providerId, callbackUrl: event.callbackUrl }
  },
  rememberIdentifier: ({ event }) => {
    expectEvent(event, ['admitRequest.done', 'consumeToken.done'])
    return { identifier: event.output.identifier }
  },
  rememberUser: ({ event }) => {
    expectEvent(event, 'lookUpUser.done')
    return { user: event.output.user, storedUser: event.output.stored ? event.output.user : null }
  },
  rememberSignInRedirect: ({ event }) => {
    expectEvent(event, 'checkSignIn.done')
    return { redirect: event.output.redirect }
  },
  rememberVerifyRequest: ({ event }) => {
    expectEvent(event, 'sendVerificationRequest.done')
    return { verifyRequestUrl: event.output.verifyRequestUrl }
  },
  // What rests in the cookie: hashes only, and no user record (it is looked up again).
  rememberPendingCode: ({ event }) => {
    expectEvent(event, 'sendVerificationRequest.done')
    const code = event.output.code!
    return {
      verifyRequestUrl: event.output.verifyRequestUrl,
      tokenHash: code.tokenHash,
      codeHash: code.codeHash,
      expires: code.expires,
      user: null,
      storedUser: null,
    }
  },
  rejectCode: () => ({ codeRejected: true }),
  recordDenial: ({ event }) => ({ denial: denialOf(event) }),
} satisfies Record<string, EmailAssignment>

/** The chart's outputs: the final states', the machine's, and the resting state's outcome. */
export const outputs = { finalStateOutcome, toCompletion, toDenial, toLinkSent, toSignInRedirect, toVerifyRequest }
