/**
 * The re-authentication chart's logic: its id, context, events, guards, assignments and outputs,
 * in plain functions (see `shared/logic.ts`). The chart is `reauthenticate.machine.ts`.
 *
 * @module
 */
import { array, boolean, enums, literal, nullable, number, object, optional, record, string, type Infer } from 'superstruct'
import type { ErrorType } from './shared/errors.js'
import type { EffectResult, Timestamped } from './shared/events.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome, type SessionCookieChange } from './shared/outcome.js'

export { REAUTHENTICATE, SESSION_MARKING_STATE } from './shared/reauthenticate-names.js'

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

/** The context a re-authentication starts from. */
export const initialContext: ReauthenticateContext = {
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
/** The error page: the recorded denial, else `AccessDenied`. */
const toFailure: Mapper = ({ context }) => (context.denial ? toDenial({ context }) : toSignIn({ context }))

const PROOF_DONE = ['verifyPassword.done', 'verifyCode.done', 'verifyEmailCode.done', 'verifyPasskey.done', 'verifyFederated.done'] as const
const PROOF_FAILED = [
  'verifyPassword.failed',
  'verifyCode.failed',
  'verifyEmailCode.failed',
  'verifyPasskey.failed',
  'verifyFederated.failed',
] as const

type ReauthGuard = Guard<ReauthenticateContext, ReauthenticateEvent>
type ReauthAssignment = Assignment<ReauthenticateContext, ReauthenticateEvent>

/** The chart's guards. */
export const guards = {
  isWrongProof: ({ event }) => {
    expectEvent(event, PROOF_FAILED)
    return event.reason === 'wrong'
  },
  offersPassword: ({ context }) => context.factors.includes('pwd'),
  offersCode: ({ context }) => context.factors.includes('otp'),
  offersEmail: ({ context }) => context.factors.includes('email'),
  offersPasskey: ({ context }) => context.factors.includes('hwk'),
  awaitsEmailCode: ({ context }) => context.emailSent === true,
  offersProvider: ({ context, event }) => {
    expectEvent(event, 'reauth.federated')
    return context.factors.includes('fed') && (context.providers ?? []).some((provider) => provider.id === event.provider)
  },
  isNotSent: ({ event }) => {
    expectEvent(event, 'sendEmailCode.failed')
    return event.reason === 'notSent'
  },
} satisfies Record<string, ReauthGuard>

/** The chart's assignments. */
export const assignments = {
  rememberStart: ({ event }) => {
    expectEvent(event, 'reauth.start')
    return { action: event.action, intent: event.intent, policy: event.policy }
  },
  rememberUser: ({ event }) => {
    expectEvent(event, 'findFactors.done')
    const { userId, sessionKey, factors, challenge, providers } = event.output
    return { userId, sessionKey, factors, challenge, providers: providers ?? [], stepError: null }
  },
  // A spent passkey challenge is forgotten: the next try asks for new options.
  recordWrongProof: () => ({ stepError: 'WrongProof', passkeyChallenge: null, passkeyOptions: null, federation: null }),
  rememberPasskeyOptions: ({ event }) => {
    expectEvent(event, 'createPasskeyOptions.done')
    return { passkeyOptions: event.output.options, passkeyChallenge: event.output.challenge, stepError: null }
  },
  rememberEmailSent: () => ({ emailSent: true, stepError: null }),
  rememberFederation: ({ event }) => {
    expectEvent(event, 'createAuthorizationRequest.done')
    return { federation: event.output, stepError: null }
  },
  // Refused by the address's send limit, or the mailer failed: the page says which.
  recordNotSent: ({ event }) => ({
    stepError: event.type === 'sendEmailCode.failed' && event.code === 'throttled' ? 'Throttled' : 'NotSent',
  }),
  rememberProof: ({ event }) => {
    expectEvent(event, PROOF_DONE)
    return { proven: event.output.factor, stepError: null }
  },
  rememberSession: ({ event }) => {
    expectEvent(event, 'markVerified.done')
    const change = event.output.session
    return { session: change?.op === 'set' ? change : null }
  },
  recordDenial: ({ event }) => ({ denial: denialOf(event) }),
} satisfies Record<string, ReauthAssignment>

/** The chart's outputs. */
export const outputs = { finalStateOutcome, toStepPage, toPasskeyOptions, toProvider, toResumption, toFailure }

/** What the page posts (`meta.step` of the waiting states): from the page itself. */
export const PROOF_STEP = {
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

/** What the page posts while the browser holds passkey options: a proof, or the assertion. */
export const PASSKEY_STEP = {
  page: 'reauthenticate',
  events: { ...PROOF_STEP.events, 'reauth.passkey': PasskeyProof },
} as const
