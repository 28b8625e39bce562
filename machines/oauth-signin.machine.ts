/**
 * OAuth 2 / OIDC sign-in, the first factor: build the authorization request (state, PKCE S256,
 * nonce) → rest in `awaitingCallback` while the user is at the provider (the flow is sealed in a
 * cookie bound to the provider) → validate the callback (state, RFC 9207 `iss`) → exchange the code
 * → validate the ID token or fetch userinfo → map and check the profile → find the linked user →
 * hand the verified identity to the sign-in completion (signIn callback, linking, session).
 *
 * @module
 */
import { boolean, nullable, object, record, string, type Infer } from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { EffectResult, Timestamped } from './shared/events.js'
import { Denial, denialOf, finalStateOutcome, Json, toDenial, type FlowOutcome } from './shared/outcome.js'
import { SIGN_IN_COMPLETION } from './signin-completion.machine.js'

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

/** The OAuth sign-in machine. */
export const oauthSignInMachine = setup({
  types: {} as { context: OAuthSignInContext; events: OAuthSignInEvent; tags: OAuthSignInTag },
  guards: {
    hasAdapter: ({ context }) => context.policy?.hasAdapter === true,
    isProviderError: ({ event }) => {
      assertEvent(event, 'validateCallback.failed')
      return event.reason === 'providerError'
    },
  },
  actions: {
    rememberStart: assign(({ event }) => {
      assertEvent(event, 'oauth.start')
      return {
        policy: event.policy,
        providerId: event.providerId,
        callbackUrl: event.callbackUrl,
        authorizationParams: event.params,
      }
    }),
    rememberAuthorizationRequest: assign(({ event }) => {
      assertEvent(event, 'createAuthorizationRequest.done')
      const { url, redirectUri, state, codeVerifier, nonce } = event.output
      return { authorizationUrl: url, redirectUri, state, codeVerifier, nonce }
    }),
    rememberCallback: assign(({ event }) => {
      assertEvent(event, 'oauth.callback')
      return { callbackParams: event.params }
    }),
    // The PKCE verifier and nonce are single-use secrets: gone once the code is exchanged.
    rememberTokens: assign(({ event }) => {
      assertEvent(event, 'exchangeCode.done')
      return { tokens: event.output.tokens, sessionClaims: event.output.sessionClaims, codeVerifier: null, nonce: null }
    }),
    rememberProfile: assign(({ event }) => {
      assertEvent(event, 'fetchProfile.done')
      return { profile: event.output.profile, user: event.output.user, account: event.output.account }
    }),
    rememberStoredUser: assign(({ event }) => {
      assertEvent(event, 'lookUpAccount.done')
      return { storedUser: event.output.user }
    }),
    recordDenial: assign(({ event }) => ({ denial: denialOf(event) })),
  },
}).createMachine({
  id: 'oauth-signin',
  version: '2',
  description: 'Signs a user in through an OAuth 2 / OpenID Connect provider.',
  initial: 'idle',
  context: initialOAuthSignInContext,
  output: finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'The sign-in form is posted (POST /signin/:provider, CSRF-checked).',
      on: { 'oauth.start': { target: 'creatingAuthorizationRequest', actions: 'rememberStart' } },
    },
    creatingAuthorizationRequest: {
      tags: 'effect.createAuthorizationRequest',
      description: 'Discovers the provider and builds the authorization URL with state, PKCE and nonce.',
      on: {
        'createAuthorizationRequest.done': {
          target: 'awaitingCallback',
          actions: 'rememberAuthorizationRequest',
        },
        'createAuthorizationRequest.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    awaitingCallback: {
      tags: 'awaitsRequest',
      description: 'The user is at the provider; the flow waits, sealed in a cookie, for the callback.',
      meta: { outcome: toProvider },
      on: { 'oauth.callback': { target: 'validatingCallback', actions: 'rememberCallback' } },
    },
    validatingCallback: {
      tags: 'effect.validateCallback',
      description: 'Checks the callback: provider errors, state, and the RFC 9207 issuer.',
      on: {
        'validateCallback.done': { target: 'exchangingCode' },
        'validateCallback.failed': [
          { guard: 'isProviderError', target: 'refusedByProvider', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    exchangingCode: {
      tags: 'effect.exchangeCode',
      description: 'Exchanges the code (with the PKCE verifier) and validates the ID token.',
      on: {
        'exchangeCode.done': { target: 'fetchingProfile', actions: 'rememberTokens' },
        'exchangeCode.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    fetchingProfile: {
      tags: 'effect.fetchProfile',
      description: 'Takes the profile from the ID token or userinfo and checks its shape.',
      on: {
        'fetchProfile.done': [
          { guard: 'hasAdapter', target: 'lookingUpAccount', actions: 'rememberProfile' },
          { target: 'verified', actions: 'rememberProfile' },
        ],
        'fetchProfile.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    lookingUpAccount: {
      tags: 'effect.lookUpAccount',
      description: 'Finds the user this provider account is linked to, if any.',
      on: {
        'lookUpAccount.done': { target: 'verified', actions: 'rememberStoredUser' },
        'lookUpAccount.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    verified: {
      type: 'final',
      description: 'The provider vouched for the user: hand over to the sign-in completion.',
      output: toCompletion,
    },
    refusedByProvider: {
      type: 'final',
      description: 'The provider answered with an error (e.g. access_denied): back to sign-in.',
      output: toDenial,
    },
    failed: {
      type: 'final',
      description: 'A check or an exchange failed: the Configuration error (reason logged).',
      output: toDenial,
    },
  },
})
