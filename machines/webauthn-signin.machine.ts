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
 * @module
 */
import { boolean, enums, nullable, number, object, string, type Infer } from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { EffectResult, Timestamped } from './shared/events.js'
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

/** Events of the WebAuthn machine. */
export type WebAuthnSignInEvent =
  | ({ type: 'webauthn.options'; providerId: string; action: string | null } & Timestamped)
  | ({
      type: 'webauthn.answer'
      ceremony: WebAuthnCeremony
      response: string
      callbackUrl: string
    } & Timestamped)
  | EffectResult<'findUser', FoundUser, 'threw'>
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

const initialContext: WebAuthnSignInContext = {
  providerId: '',
  requested: null,
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
const badRequest = (error: string): Mapper => () => ({ type: 'json', status: 400, body: { error } })
const toCompletion: Mapper = ({ context }) => ({
  type: 'handoff',
  flow: SIGN_IN_COMPLETION,
  identity: {
    firstFactor: 'webauthn-signin',
    providerId: context.providerId,
    callbackUrl: context.callbackUrl,
    user: context.user!,
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
      return { providerId: event.providerId, requested: event.action as WebAuthnCeremony | null }
    }),
    rememberUser: assign(({ event }) => {
      assertEvent(event, 'findUser.done')
      const { signedIn, user, exists } = event.output
      return { signedIn, user, exists, storedUser: signedIn ? user : null }
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
  version: '1',
  description: 'Registers a passkey or signs in with one (WebAuthn), then hands over to the sign-in completion.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'The browser asks for options (GET /webauthn-options/:provider?action=…).',
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
            guard: 'isRegistrationDecided',
            target: 'creatingRegistrationOptions',
            actions: ['rememberUser', 'chooseRegistration'],
          },
          { target: 'undecided' },
        ],
        'findUser.failed': { target: 'failed', actions: 'recordDenial' },
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
