/**
 * OAuth 2 / OIDC sign-in, the first factor: build the authorization request (state, PKCE S256,
 * nonce) → rest in `awaitingCallback` while the user is at the provider (the flow is sealed in a
 * cookie bound to the provider) → validate the callback (state, RFC 9207 `iss`) → exchange the code
 * → validate the ID token or fetch userinfo → map and check the profile → find the linked user →
 * hand the verified identity to the sign-in completion (signIn callback, linking, session).
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  guards,
  initialOAuthSignInContext,
  OAUTH_SIGN_IN,
  outputs,
  type OAuthSignInContext,
  type OAuthSignInEvent,
  type OAuthSignInTag,
} from './oauth-signin.logic.js'

export {
  initialOAuthSignInContext,
  OAUTH_SIGN_IN,
  OAuthPolicy,
  OAuthSignInContext,
  toProvider,
  type AuthorizationRequest,
  type OAuthSignInEvent,
  type OAuthSignInTag,
} from './oauth-signin.logic.js'

/**
 * The OAuth sign-in machine: the notation the diagrams, the model-based tests and the chart
 * compiler read; what it computes is in `oauth-signin.logic.ts`.
 */
export const oauthSignInMachine = setup({
  types: {} as { context: OAuthSignInContext; events: OAuthSignInEvent; tags: OAuthSignInTag },
  guards,
  actions: {
    rememberStart: assign(assignments.rememberStart),
    rememberAuthorizationRequest: assign(assignments.rememberAuthorizationRequest),
    rememberCallback: assign(assignments.rememberCallback),
    rememberTokens: assign(assignments.rememberTokens),
    rememberProfile: assign(assignments.rememberProfile),
    rememberStoredUser: assign(assignments.rememberStoredUser),
    recordDenial: assign(assignments.recordDenial),
  },
}).createMachine({
  id: OAUTH_SIGN_IN,
  version: '2',
  description: 'Signs a user in through an OAuth 2 / OpenID Connect provider.',
  initial: 'idle',
  context: initialOAuthSignInContext,
  output: outputs.finalStateOutcome,
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
      meta: { outcome: outputs.toProvider },
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
      output: outputs.toCompletion,
    },
    refusedByProvider: {
      type: 'final',
      description: 'The provider answered with an error (e.g. access_denied): back to sign-in.',
      output: outputs.toDenial,
    },
    failed: {
      type: 'final',
      description: 'A check or an exchange failed: the Configuration error (reason logged).',
      output: outputs.toDenial,
    },
  },
})
