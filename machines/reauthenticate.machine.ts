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
import { array, boolean, enums, literal, nullable, number, object, optional, record, string, type Infer } from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { ErrorType } from './shared/errors.js'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome, type SessionCookieChange } from './shared/outcome.js'

/** The id of the re-authentication flow. */
export const REAUTHENTICATE = 'reauthenticate'

/** The state that changes the session: reached only with a proven factor. */
export const SESSION_MARKING_STATE = 'markingVerified'

/** The factors a user can prove here, by their RFC 8176 `amr` names. */
export const ReauthFactor = enums(['pwd', 'otp', 'email', 'hwk', 'fed'])
export type ReauthFactor = Infer<typeof ReauthFactor>

/**
 * The request that asked: replayed once after the proof. `fields` never holds a secret (passwords,
 * codes, CSRF tokens are dropped when it is sealed).
 */
export const Intent = object({
  method: enums(['GET', 'POST']),
  /** Same origin: a path with its query, or the auth route's absolute URL. */
  url: string(),
  fields: record(string(), string()),
})
export type Intent = Infer<typeof Intent>

/** How recent, and by what, the proof must be. */
export const ReauthPolicy = object({
  maxAge: number(),
  /** The factors that count, strongest first. */
  factors: array(string()),
})
export type ReauthPolicy = Infer<typeof ReauthPolicy>

/** What the proof steps accept. */
/** The credentials form's fields (the identifier and the password), as the sign-in page posts them. */
export const PasswordProof = record(string(), string())
export const CodeProof = object({ code: string() })
/** Asking for a code by e-mail takes no field: it goes to the account's address, never to one posted. */
export const EmailCodeRequest = object({})
/** Asking for passkey options takes no field: they list the signed-in user's own passkeys. */
export const PasskeyOptionsRequest = object({})
/** The browser's assertion (`PublicKeyCredential` as JSON), posted by the page's script. */
export const PasskeyProof = object({ response: string() })
/** "Continue with <Provider>": which of the user's providers to log in at again. */
export const FederatedRequest = object({ provider: string() })

/** A provider the user can log in at again: one their account is linked to. */
export const FederatedProvider = object({ id: string(), name: string() })
export type FederatedProvider = Infer<typeof FederatedProvider>

/**
 * The authorization request sent to the provider: its own state, PKCE verifier and nonce (fresh,
 * never a sign-in flow's), where the answer comes back to, and when it was made (the ID token's
 * `auth_time` must not be older).
 */
export const Federation = object({
  providerId: string(),
  url: string(),
  redirectUri: string(),
  state: string(),
  codeVerifier: nullable(string()),
  nonce: nullable(string()),
  requestedAt: number(),
})
export type Federation = Infer<typeof Federation>

/** Context of the re-authentication machine; sealed while the user is asked. */
export const ReauthenticateContext = object({
  /** The sensitive action's name (`add-passkey`, …; `app` for an application's own route). */
  action: string(),
  intent: Intent,
  policy: ReauthPolicy,
  userId: nullable(string()),
  /** Names the session that asked (its id, not its value): a different session cannot resume. */
  sessionKey: nullable(string()),
  /** The factors this user can prove here that the policy accepts, strongest first. */
  factors: array(ReauthFactor),
  /** Names this re-authentication's attempts and its one resumption in the server-side store. */
  challenge: nullable(string()),
  stepError: nullable(string()),
  /** Whether a code was sent to the account's address (its hash waits in the store). */
  emailSent: optional(boolean()),
  /** The challenge of the passkey options handed out (single use: spent in the store when answered). */
  passkeyChallenge: optional(nullable(string())),
  /** The options for the browser; never sealed (recomputed on the next request for them). */
  passkeyOptions: optional(nullable(Json)),
  /** The OpenID providers the user's account is linked to (offered when the policy accepts `fed`). */
  providers: optional(array(FederatedProvider)),
  /** The request waiting at the provider, if the user chose one. */
  federation: optional(nullable(Federation)),
  proven: nullable(ReauthFactor),
  /** The session cookie carrying the new verification time (never sealed: the flow ends there). */
  session: optional(nullable(object({ op: literal('set'), value: string(), expires: number() }))),
  denial: nullable(Denial),
})
export type ReauthenticateContext = Infer<typeof ReauthenticateContext>

/** Why a proof was refused: `wrong` goes back to the page (counted); the rest end the flow. */
type ProofFailure = 'wrong' | 'exhausted' | 'limited' | 'signedOut' | 'threw'

/** Events of the re-authentication machine. */
export type ReauthenticateEvent =
  | ({ type: 'reauth.start'; action: string; intent: Intent; policy: ReauthPolicy } & Timestamped)
  | ({ type: 'reauth.password'; [field: string]: unknown } & Timestamped)
  | ({ type: 'reauth.code'; code: string } & Timestamped)
  | ({ type: 'reauth.sendEmailCode' } & Timestamped)
  | ({ type: 'reauth.emailCode'; code: string } & Timestamped)
  | ({ type: 'reauth.passkeyOptions' } & Timestamped)
  | ({ type: 'reauth.passkey'; response: string } & Timestamped)
  | ({ type: 'reauth.federated'; provider: string } & Timestamped)
  /** The provider's answer at the registered callback, routed here by its sealed state. */
  | ({ type: 'reauth.callback'; params: Record<string, string> } & Timestamped)
  | EffectResult<
      'findFactors',
      { userId: string; sessionKey: string; factors: ReauthFactor[]; challenge: string; providers?: FederatedProvider[] },
      'signedOut' | 'noFactor' | 'threw'
    >
  | EffectResult<'verifyPassword', { factor: 'pwd' }, ProofFailure>
  | EffectResult<'verifyCode', { factor: 'otp' }, ProofFailure>
  | EffectResult<'sendEmailCode', null, 'notSent' | 'signedOut' | 'threw'>
  | EffectResult<'verifyEmailCode', { factor: 'email' }, ProofFailure>
  | EffectResult<'createPasskeyOptions', { options: Record<string, unknown>; challenge: string }, 'signedOut' | 'threw'>
  | EffectResult<'verifyPasskey', { factor: 'hwk' }, ProofFailure>
  | EffectResult<'createAuthorizationRequest', Federation, 'signedOut' | 'threw'>
  /** `refused`: the provider's answer proves nothing for this user now (stale, another account, bad token). */
  | EffectResult<'verifyFederated', { factor: 'fed' }, ProofFailure | 'refused'>
  | EffectResult<'markVerified', { session: SessionCookieChange | null }, 'sessionChanged' | 'threw'>

/** Tags: effect states and the resting states. */
export type ReauthenticateTag =
  | 'awaitsRequest'
  | 'effect.findFactors'
  | 'effect.verifyPassword'
  | 'effect.verifyCode'
  | 'effect.sendEmailCode'
  | 'effect.verifyEmailCode'
  | 'effect.createPasskeyOptions'
  | 'effect.verifyPasskey'
  | 'effect.createAuthorizationRequest'
  | 'effect.verifyFederated'
  | 'effect.markVerified'

const initialContext: ReauthenticateContext = {
  action: 'app',
  intent: { method: 'GET', url: '/', fields: {} },
  policy: { maxAge: 600, factors: [] },
  userId: null,
  sessionKey: null,
  factors: [],
  challenge: null,
  stepError: null,
  emailSent: false,
  passkeyChallenge: null,
  passkeyOptions: null,
  providers: [],
  federation: null,
  proven: null,
  session: null,
  denial: null,
}

type Mapper = (args: { context: ReauthenticateContext }) => FlowOutcome

const toStepPage = (): FlowOutcome => ({ type: 'step' })
/** The passkey options for the page's script (as the sign-in's `WebAuthnOptionsResponseBody`). */
const toPasskeyOptions = (context: ReauthenticateContext): FlowOutcome => ({
  type: 'json',
  body: { action: 'authenticate', options: context.passkeyOptions },
  cache: 'no-store',
})
/** The browser goes to the provider's login. */
const toProvider = (context: ReauthenticateContext): FlowOutcome => ({ type: 'redirect', url: context.federation!.url })
/** The action resumes: a page that posts the sealed form once, or the redirect to a page. */
const toResumption: Mapper = ({ context }) => {
  const session = context.session ? { session: context.session } : {}
  if (context.intent.method === 'GET') return { type: 'redirect', url: context.intent.url, ...session }
  return { type: 'page', page: 'resume', data: { action: context.action, intent: context.intent }, ...session }
}
const toSignIn: Mapper = () => ({ type: 'error', error: 'AccessDenied' as ErrorType })

const PROOF_DONE = ['verifyPassword.done', 'verifyCode.done', 'verifyEmailCode.done', 'verifyPasskey.done', 'verifyFederated.done'] as const
const PROOF_FAILED = [
  'verifyPassword.failed',
  'verifyCode.failed',
  'verifyEmailCode.failed',
  'verifyPasskey.failed',
  'verifyFederated.failed',
] as const

/** A wrong proof goes back to the page (counted); anything else ends the flow. */
const proofFailure = [
  { guard: 'isWrongProof', target: 'awaitingProof', actions: 'recordWrongProof' },
  { target: 'failed', actions: 'recordDenial' },
] as const

/** What the page posts, from the page or while the browser holds passkey options. */
const PROOF_STEP = {
  page: 'reauthenticate',
  events: {
    'reauth.password': PasswordProof,
    'reauth.code': CodeProof,
    'reauth.sendEmailCode': EmailCodeRequest,
    'reauth.emailCode': CodeProof,
    'reauth.passkeyOptions': PasskeyOptionsRequest,
    'reauth.federated': FederatedRequest,
  },
} as const

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
 * Builds the re-authentication machine. The engine builds its own on the first request that runs it
 * (a session read never does), so that start-up does not pay for the chart.
 */
export const buildReauthenticate = () => setup({
  types: {} as { context: ReauthenticateContext; events: ReauthenticateEvent; tags: ReauthenticateTag },
  guards: {
    isWrongProof: ({ event }) => {
      assertEvent(event, PROOF_FAILED)
      return event.reason === 'wrong'
    },
    offersPassword: ({ context }) => context.factors.includes('pwd'),
    offersCode: ({ context }) => context.factors.includes('otp'),
    offersEmail: ({ context }) => context.factors.includes('email'),
    offersPasskey: ({ context }) => context.factors.includes('hwk'),
    awaitsEmailCode: ({ context }) => context.emailSent === true,
    offersProvider: ({ context, event }) => {
      assertEvent(event, 'reauth.federated')
      return context.factors.includes('fed') && (context.providers ?? []).some((provider) => provider.id === event.provider)
    },
    isNotSent: ({ event }) => {
      assertEvent(event, 'sendEmailCode.failed')
      return event.reason === 'notSent'
    },
  },
  actions: {
    rememberStart: assign(({ event }) => {
      assertEvent(event, 'reauth.start')
      return { action: event.action, intent: event.intent, policy: event.policy }
    }),
    rememberUser: assign(({ event }) => {
      assertEvent(event, 'findFactors.done')
      const { userId, sessionKey, factors, challenge, providers } = event.output
      return { userId, sessionKey, factors, challenge, providers: providers ?? [], stepError: null }
    }),
    // A spent passkey challenge is forgotten: the next try asks for new options.
    recordWrongProof: assign({ stepError: 'WrongProof', passkeyChallenge: null, passkeyOptions: null, federation: null }),
    rememberPasskeyOptions: assign(({ event }) => {
      assertEvent(event, 'createPasskeyOptions.done')
      return { passkeyOptions: event.output.options, passkeyChallenge: event.output.challenge, stepError: null }
    }),
    rememberEmailSent: assign({ emailSent: true, stepError: null }),
    rememberFederation: assign(({ event }) => {
      assertEvent(event, 'createAuthorizationRequest.done')
      return { federation: event.output, stepError: null }
    }),
    recordNotSent: assign({ stepError: 'NotSent' }),
    rememberProof: assign(({ event }) => {
      assertEvent(event, PROOF_DONE)
      return { proven: event.output.factor, stepError: null }
    }),
    rememberSession: assign(({ event }) => {
      assertEvent(event, 'markVerified.done')
      const change = event.output.session
      return { session: change?.op === 'set' ? change : null }
    }),
    recordDenial: assign(({ event }) => ({ denial: denialOf(event) })),
  },
}).createMachine({
  id: REAUTHENTICATE,
  version: '4',
  description:
    'Step-up: the signed-in user proves a factor again (password, one-time code, e-mailed code, passkey, a new login at a linked OpenID provider); the same session is marked verified and the action that asked resumes once.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
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
      meta: { outcome: toStepPage, step: PROOF_STEP },
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
        outcome: toPasskeyOptions,
        step: { page: 'reauthenticate', events: { ...PROOF_STEP.events, 'reauth.passkey': PasskeyProof } },
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
      meta: { outcome: toProvider, step: PROOF_STEP },
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
      output: toResumption,
    },
    failed: {
      type: 'final',
      description:
        'Signed out or another session by now, too many wrong proofs, or a store failure: the error page.',
      output: ({ context }) => (context.denial ? toDenial({ context }) : toSignIn({ context })),
    },
  },
})

/** The re-authentication machine; marked pure, so a bundle that never reads it does not build it. */
export const reauthenticateMachine = /* @__PURE__ */ buildReauthenticate()
