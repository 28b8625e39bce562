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
import { boolean, enums, nullable, number, object, string, type Infer } from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.machine.js'

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

const initialContext: WebAuthnSignInContext = {
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

/** A refusal (the answer, or a request before it, is at fault) is rejected; an outage failed. */
const rejectedOrFailed = [
  { guard: 'isRefusal', target: 'rejected', actions: 'recordDenial' },
  { target: 'failed', actions: 'recordDenial' },
] as const

/** The WebAuthn (passkey) machine. */
export const webauthnSignInMachine = setup({
  types: {} as { context: WebAuthnSignInContext; events: WebAuthnSignInEvent; tags: WebAuthnSignInTag },
  guards: {
    isUnknownAction: ({ event }) => {
      assertEvent(event, 'webauthn.options')
      return event.action !== null && event.action !== 'register' && event.action !== 'authenticate'
    },
    isAuthenticationDecided: ({ context, event }) => {
      assertEvent(event, 'findUser.done')
      return decideCeremony(context.requested, event.output) === 'authenticate'
    },
    isRegistrationDecided: ({ context, event }) => {
      assertEvent(event, 'findUser.done')
      return decideCeremony(context.requested, event.output) === 'register'
    },
    /** A sign-up while an e-mail provider can verify its address. */
    isSignUpToVerify: ({ context, event }) => {
      assertEvent(event, 'findUser.done')
      return context.verifier !== null && isSignUp(context.requested, event.output)
    },
    /** A sign-up to verify, asked by a request that may send the code. */
    isVerifiableSignUp: ({ context, event }) => {
      assertEvent(event, 'findUser.done')
      return context.verifier !== null && context.mayEmail && isSignUp(context.requested, event.output)
    },
    isCodeWrong: ({ event }) => {
      assertEvent(event, 'checkCode.failed')
      return event.reason === 'wrong'
    },
    isCodeExhausted: ({ event }) => {
      assertEvent(event, 'checkCode.failed')
      return event.reason === 'exhausted'
    },
    isSendRefused: ({ event }) => {
      assertEvent(event, 'sendCode.failed')
      return event.reason === 'notSent'
    },
    isTokenSpent: ({ event }) => {
      assertEvent(event, 'spendToken.failed')
      return event.reason === 'invalid'
    },
    isRegistering: ({ context }) => context.ceremony === 'register',
    /** The browser or an earlier request is at fault (not an outage): a refusal, not a failure. */
    isRefusal: ({ event }) => {
      assertEvent(event, ['spendChallenge.failed', 'findAuthenticator.failed'])
      return event.reason !== 'threw'
    },
  },
  actions: {
    rememberRequest: assign(({ event }) => {
      assertEvent(event, 'webauthn.options')
      return {
        providerId: event.providerId,
        requested: event.action as WebAuthnCeremony | null,
        verifier: event.verifier,
        mayEmail: event.mayEmail,
      }
    }),
    rememberUser: assign(({ event }) => {
      assertEvent(event, 'findUser.done')
      const { signedIn, user, exists } = event.output
      return { signedIn, user, exists, storedUser: signedIn ? user : null }
    }),
    /** The address as the e-mail flow normalised it: the one the code goes to. */
    rememberAddress: assign(({ context, event }) => {
      assertEvent(event, 'admitAddress.done')
      return { user: { ...context.user, email: event.output.email } }
    }),
    // What rests in the cookie while the code is awaited: its hashes, never the code.
    rememberSentCode: assign(({ event }) => {
      assertEvent(event, 'sendCode.done')
      return { tokenHash: event.output.tokenHash, codeHash: event.output.codeHash, codeExpires: event.output.expires }
    }),
    rejectCode: assign({ codeRejected: true }),
    // The code is spent: its hashes need not travel on in the cookie.
    markAddressVerified: assign(({ event }) => {
      assertEvent(event, 'spendToken.done')
      return { emailVerified: event.at, codeRejected: false, tokenHash: null, codeHash: null }
    }),
    chooseAuthentication: assign({ ceremony: 'authenticate' as const }),
    chooseRegistration: assign({ ceremony: 'register' as const }),
    rememberOptions: assign(({ event }) => {
      assertEvent(event, ['createAuthenticationOptions.done', 'createRegistrationOptions.done'])
      return { options: event.output.options, challenge: event.output.challenge }
    }),
    rememberAnswer: assign(({ event }) => {
      assertEvent(event, 'webauthn.answer')
      return { answered: event.ceremony, response: event.response, callbackUrl: event.callbackUrl }
    }),
    rememberAuthenticator: assign(({ event }) => {
      assertEvent(event, 'findAuthenticator.done')
      return { authenticator: event.output.authenticator }
    }),
    rememberCounter: assign(({ event }) => {
      assertEvent(event, 'verifyAssertion.done')
      return { newCounter: event.output.newCounter }
    }),
    rememberAccount: assign(({ event }) => {
      assertEvent(event, 'findAccount.done')
      return { account: event.output.account, user: event.output.user, storedUser: event.output.user }
    }),
    rememberEnrolment: assign(({ event }) => {
      assertEvent(event, 'verifyAttestation.done')
      return { account: event.output.account, enrolment: event.output.authenticator }
    }),
    recordDenial: assign(({ event }) => ({ denial: denialOf(event) })),
  },
}).createMachine({
  id: 'webauthn-signin',
  version: '2',
  description: 'Registers a passkey or signs in with one (WebAuthn), then hands over to the sign-in completion.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
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
      meta: { outcome: toCodeRequest },
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
      meta: { outcome: toCeremonyOptions },
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
      output: toCompletion,
    },
    invalidAction: {
      type: 'final',
      description: 'The action is neither register nor authenticate: 400 {"error":"Invalid action"}.',
      output: badRequest('Invalid action'),
    },
    undecided: {
      type: 'final',
      description: 'The rules allow no ceremony for this request: 400 {"error":"Invalid request"}.',
      output: badRequest('Invalid request'),
    },
    verificationRequired: {
      type: 'final',
      description:
        'A sign-up to verify asked without a CSRF-checked POST, which alone may send e-mail: 400 {"error":"Email verification required"}.',
      output: badRequest('Email verification required'),
    },
    codeNotSent: {
      type: 'final',
      description: 'A bad address, too many sends, or a failed send: 400 {"error":"The e-mail could not be sent"}.',
      output: badRequest('The e-mail could not be sent'),
    },
    codeRefused: {
      type: 'final',
      description: 'The code expired, was used, or was got wrong too often: 400 {"error":"The code is no longer valid"}.',
      output: badRequest('The code is no longer valid'),
    },
    rejected: {
      type: 'final',
      description: 'The answer was refused (replayed, mismatched, unknown, forged): WebAuthnVerificationError.',
      output: toDenial,
    },
    failed: {
      type: 'final',
      description: 'Something unexpected failed (the database): the Configuration error (reason logged).',
      output: toDenial,
    },
  },
})
