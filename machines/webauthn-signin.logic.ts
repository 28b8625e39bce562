/**
 * The passkey (WebAuthn) sign-in chart's logic: its id, context, events, the ceremony rules,
 * guards, assignments and outputs, in plain functions (see `shared/logic.ts`). The chart is
 * `webauthn-signin.machine.ts`.
 *
 * @module
 */
import { boolean, enums, nullable, number, object, string, type Infer } from 'superstruct'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.logic.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The passkey sign-in chart's id. */
export const WEBAUTHN_SIGN_IN = 'webauthn-signin'

/** The two WebAuthn ceremonies. */
export const WebAuthnCeremony = enums(['register', 'authenticate'])
export type WebAuthnCeremony = Infer<typeof WebAuthnCeremony>


/** Context of the WebAuthn machine; everything before the browser's answer is sealed while it waits. */
export const WebAuthnSignInContext = object({
  providerId: string(),
  /** The `action` the options request asked for; `null` lets the rules decide. */
  requested: nullable(WebAuthnCeremony),
  /** The e-mail provider that verifies a sign-up's address, when one is configured. */
  verifier: nullable(string()),
  /** Whether the options request may send e-mail (a POST with a CSRF token). */
  mayEmail: boolean(),
  /** Sign-up codes only: the hash of the e-mail token the code stands for. */
  tokenHash: nullable(string()),
  /** Sign-up codes only: the code's hash, bound to `tokenHash`. */
  codeHash: nullable(string()),
  /** Sign-up codes only: when the code expires, epoch seconds. */
  codeExpires: number(),
  /** The last code typed was wrong: the answer says so. */
  codeRejected: boolean(),
  /** When a code proved the sign-up's address, epoch seconds; `null`: not verified. */
  emailVerified: nullable(number()),
  /** Whether the options request came with a session. */
  signedIn: boolean(),
  /** Whether the user is stored (a signed-in user, or a known e-mail address). */
  exists: boolean(),
  /** Who the ceremony is for: `{ id?, email, name? }`; after an assertion, the stored user. */
  user: nullable(Json),
  /** The stored user the new passkey or the assertion belongs to, once known. */
  storedUser: nullable(Json),
  ceremony: nullable(WebAuthnCeremony),
  /** The ceremony the browser says its answer is for. */
  answered: nullable(WebAuthnCeremony),
  /** The options handed to the browser (the challenge among them). */
  options: nullable(Json),
  challenge: string(),
  callbackUrl: string(),
  /** The browser's answer as posted (JSON text); never sealed, the flow ends with it. */
  response: nullable(string()),
  /** The stored authenticator the assertion names. */
  authenticator: nullable(Json),
  newCounter: nullable(number()),
  account: nullable(Json),
  /** The new passkey a registration stores with the user. */
  enrolment: nullable(Json),
  denial: nullable(Denial),
})
export type WebAuthnSignInContext = Infer<typeof WebAuthnSignInContext>

/** Who asked for options, as the `findUser` effect found out. */
export interface FoundUser {
  signedIn: boolean
  /** `{ id?, email, name? }`, or null when neither a session nor an e-mail address says. */
  user: Record<string, unknown> | null
  exists: boolean
}

/** Options for the browser and the challenge they carry. */
export interface CeremonyOptions {
  options: Record<string, unknown>
  challenge: string
}

/** What sending a sign-up's code leaves for checking it: the hashes and the expiry. */
export interface SentCode {
  tokenHash: string
  codeHash: string
  expires: number
}

/** Events of the WebAuthn machine. */
export type WebAuthnSignInEvent =
  | ({
      type: 'webauthn.options'
      providerId: string
      action: string | null
      /** The e-mail provider that verifies a sign-up's address, when one is configured. */
      verifier: string | null
      /** The request may send e-mail (a POST with a CSRF token). */
      mayEmail: boolean
    } & Timestamped)
  | ({ type: 'webauthn.code'; /** Never assigned. */ code: string } & Timestamped)
  | ({
      type: 'webauthn.answer'
      ceremony: WebAuthnCeremony
      response: string
      callbackUrl: string
    } & Timestamped)
  | EffectResult<'findUser', FoundUser, 'threw'>
  | EffectResult<'admitAddress', { email: string }, 'invalidIdentifier' | 'throttled'>
  | EffectResult<'sendCode', SentCode, 'notSent' | 'threw'>
  | EffectResult<'checkCode', null, 'wrong' | 'exhausted' | 'expired'>
  | EffectDone<'voidToken', null>
  | EffectResult<'spendToken', null, 'invalid' | 'threw'>
  | EffectResult<'createAuthenticationOptions', CeremonyOptions, 'threw'>
  | EffectResult<'createRegistrationOptions', CeremonyOptions, 'threw'>
  | EffectResult<'spendChallenge', null, 'mismatch' | 'replayed' | 'threw'>
  | EffectResult<'findAuthenticator', { authenticator: Record<string, unknown> }, 'invalid' | 'unknown' | 'threw'>
  | EffectResult<'verifyAssertion', { newCounter: number }, 'invalid'>
  | EffectResult<'updateCounter', null, 'threw'>
  | EffectResult<'findAccount', { account: Record<string, unknown>; user: Record<string, unknown> }, 'threw'>
  | EffectResult<
      'verifyAttestation',
      { account: Record<string, unknown>; authenticator: Record<string, unknown> },
      'invalid'
    >

/** Tags: effect states and the resting states. */
export type WebAuthnSignInTag =
  | 'awaitsRequest'
  | 'effect.findUser'
  | 'effect.admitAddress'
  | 'effect.sendCode'
  | 'effect.checkCode'
  | 'effect.voidToken'
  | 'effect.spendToken'
  | 'effect.createAuthenticationOptions'
  | 'effect.createRegistrationOptions'
  | 'effect.spendChallenge'
  | 'effect.findAuthenticator'
  | 'effect.verifyAssertion'
  | 'effect.updateCounter'
  | 'effect.findAccount'
  | 'effect.verifyAttestation'

/**
 * Auth.js's decision rules (reference §5.4): an explicit `authenticate` always authenticates;
 * `register` needs a user with an e-mail address, and a signed-in user must exist (adding a
 * passkey) while an anonymous one must not (signing up). Without an action a signed-in user gets
 * no decision, an anonymous request authenticates unless its e-mail address is unknown.
 */
export function decideCeremony(requested: WebAuthnCeremony | null, found: FoundUser): WebAuthnCeremony | null {
  const { signedIn, user, exists } = found
  if (requested === 'authenticate') return 'authenticate'
  if (requested === 'register') {
    return user && typeof user.email === 'string' && signedIn === exists ? 'register' : null
  }
  if (signedIn) return null
  if (user && !exists) return typeof user.email === 'string' ? 'register' : null
  return 'authenticate'
}

/**
 * Whether `found` asks for a sign-up: a registration for someone not stored and not signed in (the
 * address typed in is all there is to go by).
 */
export function isSignUp(requested: WebAuthnCeremony | null, found: FoundUser): boolean {
  return decideCeremony(requested, found) === 'register' && !found.signedIn
}

/** The context a passkey sign-in starts from. */
export const initialContext: WebAuthnSignInContext = {
  providerId: '',
  requested: null,
  verifier: null,
  mayEmail: false,
  tokenHash: null,
  codeHash: null,
  codeExpires: 0,
  codeRejected: false,
  emailVerified: null,
  signedIn: false,
  exists: false,
  user: null,
  storedUser: null,
  ceremony: null,
  answered: null,
  options: null,
  challenge: '',
  callbackUrl: '',
  response: null,
  authenticator: null,
  newCounter: null,
  account: null,
  enrolment: null,
  denial: null,
}

type Mapper = (args: { context: WebAuthnSignInContext }) => FlowOutcome

/** The resting outcome: the options for the browser (spec §4 `WebAuthnOptionsResponseBody`). */
export function toCeremonyOptions(context: WebAuthnSignInContext): FlowOutcome {
  return { type: 'json', body: { action: context.ceremony, options: context.options }, cache: 'no-store' }
}
/**
 * The resting outcome while a sign-up's code is awaited: `{"action":"verify-email"}`, with
 * `"error":"Invalid code"` (and 400) after a wrong one.
 */
export function toCodeRequest(context: WebAuthnSignInContext): FlowOutcome {
  return context.codeRejected
    ? { type: 'json', status: 400, body: { action: 'verify-email', error: 'Invalid code' }, cache: 'no-store' }
    : { type: 'json', body: { action: 'verify-email' }, cache: 'no-store' }
}
const badRequest = (error: string): Mapper => () => ({ type: 'json', status: 400, body: { error } })
const toInvalidAction = badRequest('Invalid action')
const toInvalidRequest = badRequest('Invalid request')
const toVerificationRequired = badRequest('Email verification required')
const toCodeNotSent = badRequest('The e-mail could not be sent')
const toCodeRefused = badRequest('The code is no longer valid')
/** The user handed on: a sign-up's address marked verified when a code proved it. */
const verifiedUser = (context: WebAuthnSignInContext) =>
  context.emailVerified === null
    ? context.user!
    : { ...context.user!, emailVerified: new Date(context.emailVerified * 1000).toISOString() }
const toCompletion: Mapper = ({ context }) => ({
  type: 'handoff',
  flow: SIGN_IN_COMPLETION,
  identity: {
    firstFactor: 'webauthn-signin',
    providerId: context.providerId,
    callbackUrl: context.callbackUrl,
    user: verifiedUser(context),
    account: context.account!,
    profile: null,
    storedUser: context.storedUser,
    persist: true,
    credentials: null,
    claims: null,
    // Auth.js ignores a URL returned by the signIn callback for passkeys: the user is signed in.
    ignoresSignInRedirect: true,
    enrolment: context.enrolment,
  },
})

type WebAuthnGuard = Guard<WebAuthnSignInContext, WebAuthnSignInEvent>
type WebAuthnAssignment = Assignment<WebAuthnSignInContext, WebAuthnSignInEvent>

/** The chart's guards. */
export const guards = {
  isUnknownAction: ({ event }) => {
    expectEvent(event, 'webauthn.options')
    return event.action !== null && event.action !== 'register' && event.action !== 'authenticate'
  },
  isAuthenticationDecided: ({ context, event }) => {
    expectEvent(event, 'findUser.done')
    return decideCeremony(context.requested, event.output) === 'authenticate'
  },
  isRegistrationDecided: ({ context, event }) => {
    expectEvent(event, 'findUser.done')
    return decideCeremony(context.requested, event.output) === 'register'
  },
  /** A sign-up while an e-mail provider can verify its address. */
  isSignUpToVerify: ({ context, event }) => {
    expectEvent(event, 'findUser.done')
    return context.verifier !== null && isSignUp(context.requested, event.output)
  },
  /** A sign-up to verify, asked by a request that may send the code. */
  isVerifiableSignUp: ({ context, event }) => {
    expectEvent(event, 'findUser.done')
    return context.verifier !== null && context.mayEmail && isSignUp(context.requested, event.output)
  },
  isCodeWrong: ({ event }) => {
    expectEvent(event, 'checkCode.failed')
    return event.reason === 'wrong'
  },
  isCodeExhausted: ({ event }) => {
    expectEvent(event, 'checkCode.failed')
    return event.reason === 'exhausted'
  },
  isSendRefused: ({ event }) => {
    expectEvent(event, 'sendCode.failed')
    return event.reason === 'notSent'
  },
  isTokenSpent: ({ event }) => {
    expectEvent(event, 'spendToken.failed')
    return event.reason === 'invalid'
  },
  isRegistering: ({ context }) => context.ceremony === 'register',
  /** The browser or an earlier request is at fault (not an outage): a refusal, not a failure. */
  isRefusal: ({ event }) => {
    expectEvent(event, ['spendChallenge.failed', 'findAuthenticator.failed'])
    return event.reason !== 'threw'
  },
} satisfies Record<string, WebAuthnGuard>

/** The chart's assignments. */
export const assignments = {
  rememberRequest: ({ event }) => {
    expectEvent(event, 'webauthn.options')
    return {
      providerId: event.providerId,
      requested: event.action as WebAuthnCeremony | null,
      verifier: event.verifier,
      mayEmail: event.mayEmail,
    }
  },
  rememberUser: ({ event }) => {
    expectEvent(event, 'findUser.done')
    const { signedIn, user, exists } = event.output
    return { signedIn, user, exists, storedUser: signedIn ? user : null }
  },
  /** The address as the e-mail flow normalised it: the one the code goes to. */
  rememberAddress: ({ context, event }) => {
    expectEvent(event, 'admitAddress.done')
    return { user: { ...context.user, email: event.output.email } }
  },
  // What rests in the cookie while the code is awaited: its hashes, never the code.
  rememberSentCode: ({ event }) => {
    expectEvent(event, 'sendCode.done')
    return { tokenHash: event.output.tokenHash, codeHash: event.output.codeHash, codeExpires: event.output.expires }
  },
  rejectCode: () => ({ codeRejected: true }),
  // The code is spent: its hashes need not travel on in the cookie.
  markAddressVerified: ({ event }) => {
    expectEvent(event, 'spendToken.done')
    return { emailVerified: event.at, codeRejected: false, tokenHash: null, codeHash: null }
  },
  chooseAuthentication: () => ({ ceremony: 'authenticate' as const }),
  chooseRegistration: () => ({ ceremony: 'register' as const }),
  rememberOptions: ({ event }) => {
    expectEvent(event, ['createAuthenticationOptions.done', 'createRegistrationOptions.done'])
    return { options: event.output.options, challenge: event.output.challenge }
  },
  rememberAnswer: ({ event }) => {
    expectEvent(event, 'webauthn.answer')
    return { answered: event.ceremony, response: event.response, callbackUrl: event.callbackUrl }
  },
  rememberAuthenticator: ({ event }) => {
    expectEvent(event, 'findAuthenticator.done')
    return { authenticator: event.output.authenticator }
  },
  rememberCounter: ({ event }) => {
    expectEvent(event, 'verifyAssertion.done')
    return { newCounter: event.output.newCounter }
  },
  rememberAccount: ({ event }) => {
    expectEvent(event, 'findAccount.done')
    return { account: event.output.account, user: event.output.user, storedUser: event.output.user }
  },
  rememberEnrolment: ({ event }) => {
    expectEvent(event, 'verifyAttestation.done')
    return { account: event.output.account, enrolment: event.output.authenticator }
  },
  recordDenial: ({ event }) => ({ denial: denialOf(event) }),
} satisfies Record<string, WebAuthnAssignment>

/** The chart's outputs: the final states', the machine's, and the resting states' outcomes. */
export const outputs = {
  finalStateOutcome,
  toCeremonyOptions,
  toCodeNotSent,
  toCodeRefused,
  toCodeRequest,
  toCompletion,
  toDenial,
  toInvalidAction,
  toInvalidRequest,
  toVerificationRequired,
}
