/**
 * The OAuth 2 / OIDC sign-in chart's logic: its id, context, events, guards, assignments and
 * outputs, in plain functions (see `shared/logic.ts`). The chart is `oauth-signin.machine.ts`.
 *
 * @module
 */
import { boolean, nullable, object, record, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.logic.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The OAuth sign-in chart's id. */
export const OAUTH_SIGN_IN = 'oauth-signin'

/** Settings the HTTP layer copies from the config into the start event. */
export const OAuthPolicy = object({
  /** Whether an adapter stores users and accounts (account linking happens only then). */
  hasAdapter: boolean(),
})
export type OAuthPolicy = Infer<typeof OAuthPolicy>


/** Context of the OAuth machine; everything before the callback is sealed while it waits. */
export const OAuthSignInContext = object({
  policy: nullable(OAuthPolicy),
  providerId: string(),
  callbackUrl: string(),
  /** Extra authorization parameters from the sign-in request (`prompt`, `login_hint`, …). */
  authorizationParams: record(string(), string()),
  authorizationUrl: string(),
  redirectUri: string(),
  state: nullable(string()),
  codeVerifier: nullable(string()),
  nonce: nullable(string()),
  /** The callback parameters, from the query or (form_post) the body. */
  callbackParams: record(string(), string()),
  tokens: nullable(Json),
  /** What a JWT session keeps of the tokens (refresh, RP logout), for providers that opt in. */
  sessionClaims: nullable(Json),
  profile: nullable(Json),
  user: nullable(Json),
  account: nullable(Json),
  storedUser: nullable(Json),
  denial: nullable(Denial),
})
export type OAuthSignInContext = Infer<typeof OAuthSignInContext>

/** Output of the authorization request effect: the URL and the secrets the callback must match. */
export interface AuthorizationRequest {
  url: string
  redirectUri: string
  state: string | null
  codeVerifier: string | null
  nonce: string | null
}

/** Events of the OAuth machine. */
export type OAuthSignInEvent =
  | ({
      type: 'oauth.start'
      providerId: string
      callbackUrl: string
      params: Record<string, string>
      policy: OAuthPolicy
    } & Timestamped)
  | ({ type: 'oauth.callback'; params: Record<string, string> } & Timestamped)
  | EffectResult<'createAuthorizationRequest', AuthorizationRequest, 'threw'>
  | EffectResult<'validateCallback', null, 'providerError' | 'invalid'>
  | EffectResult<
      'exchangeCode',
      { tokens: Record<string, unknown>; sessionClaims: Record<string, unknown> | null },
      'threw'
    >
  | EffectResult<
      'fetchProfile',
      { profile: Record<string, unknown>; user: Record<string, unknown>; account: Record<string, unknown> },
      'invalidProfile' | 'threw'
    >
  | EffectResult<'lookUpAccount', { user: Record<string, unknown> | null }, 'threw'>

/** Tags: effect states and the resting states. */
export type OAuthSignInTag =
  | 'awaitsRequest'
  | 'effect.createAuthorizationRequest'
  | 'effect.validateCallback'
  | 'effect.exchangeCode'
  | 'effect.fetchProfile'
  | 'effect.lookUpAccount'

/** The context of a sign-in that has not started: every field empty. */
export const initialOAuthSignInContext: Readonly<OAuthSignInContext> = Object.freeze({
  policy: null,
  providerId: '',
  callbackUrl: '',
  authorizationParams: {},
  authorizationUrl: '',
  redirectUri: '',
  state: null,
  codeVerifier: null,
  nonce: null,
  callbackParams: {},
  tokens: null,
  sessionClaims: null,
  profile: null,
  user: null,
  account: null,
  storedUser: null,
  denial: null,
})

type Mapper = (args: { context: OAuthSignInContext }) => FlowOutcome

/** The resting outcome: send the browser to the provider. */
export function toProvider(context: OAuthSignInContext): FlowOutcome {
  return { type: 'redirect', url: context.authorizationUrl }
}
const toCompletion: Mapper = ({ context }) => ({
  type: 'handoff',
  flow: SIGN_IN_COMPLETION,
  identity: {
    firstFactor: 'oauth-signin',
    providerId: context.providerId,
    callbackUrl: context.callbackUrl,
    // The `signIn` callback sees the linked user when there is one, else the provider's user.
    user: context.storedUser ?? context.user!,
    account: context.account!,
    profile: context.profile,
    storedUser: context.storedUser,
    persist: context.policy?.hasAdapter === true,
    credentials: null,
    claims: context.sessionClaims,
  },
})

type OAuthGuard = Guard<OAuthSignInContext, OAuthSignInEvent>
type OAuthAssignment = Assignment<OAuthSignInContext, OAuthSignInEvent>

/** The chart's guards. */
export const guards = {
  hasAdapter: ({ context }) => context.policy?.hasAdapter === true,
  isProviderError: ({ event }) => {
    expectEvent(event, 'validateCallback.failed')
    return event.reason === 'providerError'
  },
} satisfies Record<string, OAuthGuard>

/** The chart's assignments. */
export const assignments = {
  rememberStart: ({ event }) => {
    expectEvent(event, 'oauth.start')
    return {
      policy: event.policy,
      providerId: event.providerId,
      callbackUrl: event.callbackUrl,
      authorizationParams: event.params,
    }
  },
  rememberAuthorizationRequest: ({ event }) => {
    expectEvent(event, 'createAuthorizationRequest.done')
    const { url, redirectUri, state, codeVerifier, nonce } = event.output
    return { authorizationUrl: url, redirectUri, state, codeVerifier, nonce }
  },
  rememberCallback: ({ event }) => {
    expectEvent(event, 'oauth.callback')
    return { callbackParams: event.params }
  },
  // The PKCE verifier and nonce are single-use secrets: gone once the code is exchanged.
  rememberTokens: ({ event }) => {
    expectEvent(event, 'exchangeCode.done')
    return { tokens: event.output.tokens, sessionClaims: event.output.sessionClaims, codeVerifier: null, nonce: null }
  },
  rememberProfile: ({ event }) => {
    expectEvent(event, 'fetchProfile.done')
    return { profile: event.output.profile, user: event.output.user, account: event.output.account }
  },
  rememberStoredUser: ({ event }) => {
    expectEvent(event, 'lookUpAccount.done')
    return { storedUser: event.output.user }
  },
  recordDenial: ({ event }) => ({ denial: denialOf(event) }),
} satisfies Record<string, OAuthAssignment>

/** The chart's outputs: the final states', the machine's, and the resting state's outcome. */
export const outputs = { finalStateOutcome, toCompletion, toDenial, toProvider }
