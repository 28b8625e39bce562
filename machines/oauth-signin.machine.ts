/**
 * OAuth 2 / OIDC sign-in: build the authorization request (state, PKCE S256, nonce) → rest in
 * `awaitingCallback` while the user is at the provider (the flow is sealed in a cookie bound to the
 * provider) → validate the callback (state, RFC 9207 `iss`) → exchange the code → validate the ID
 * token or fetch userinfo → map and check the profile → link the account → issue the session.
 *
 * @module
 */
import {
  boolean,
  enums,
  nullable,
  number,
  object,
  record,
  string,
  unknown,
  type Infer,
} from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { ErrorType } from '../core/errors.js'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { finalStateOutcome, type FlowOutcome } from './shared/outcome.js'

/** Settings the HTTP layer copies from the config into the start event. */
export const OAuthPolicy = object({
  strategy: enums(['jwt', 'database']),
  maxAge: number(),
  /** Whether an adapter stores users and accounts (account linking happens only then). */
  hasAdapter: boolean(),
  /** `pages.newUser`, where a first sign-in goes. */
  newUserUrl: nullable(string()),
})
export type OAuthPolicy = Infer<typeof OAuthPolicy>

const Denial = object({ error: string(), code: nullable(string()) })
const Json = record(string(), unknown())

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
  profile: nullable(Json),
  user: nullable(Json),
  account: nullable(Json),
  storedUser: nullable(Json),
  isNewUser: boolean(),
  redirect: nullable(string()),
  issued: nullable(string()),
  expires: number(),
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
  | EffectResult<'exchangeCode', { tokens: Record<string, unknown> }, 'threw'>
  | EffectResult<
      'fetchProfile',
      { profile: Record<string, unknown>; user: Record<string, unknown>; account: Record<string, unknown> },
      'invalidProfile' | 'threw'
    >
  | EffectResult<'lookUpAccount', { user: Record<string, unknown> | null }, 'threw'>
  | EffectResult<'checkSignIn', { redirect: string | null }, 'denied'>
  | EffectResult<
      'linkAccount',
      { user: Record<string, unknown>; account: Record<string, unknown>; isNewUser: boolean },
      'notLinked' | 'threw'
    >
  | EffectResult<'issueSession', { value: string | null; expires: number }, 'threw'>
  | EffectResult<'createDatabaseSession', { value: string; expires: number; user: Record<string, unknown> }, 'threw'>
  | EffectDone<'emitSignInEvent', null>

/** Tags: effect states and the resting states. */
export type OAuthSignInTag =
  | 'awaitsRequest'
  | 'effect.createAuthorizationRequest'
  | 'effect.validateCallback'
  | 'effect.exchangeCode'
  | 'effect.fetchProfile'
  | 'effect.lookUpAccount'
  | 'effect.checkSignIn'
  | 'effect.linkAccount'
  | 'effect.issueSession'
  | 'effect.createDatabaseSession'
  | 'effect.emitSignInEvent'

const initialContext: OAuthSignInContext = {
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
  profile: null,
  user: null,
  account: null,
  storedUser: null,
  isNewUser: false,
  redirect: null,
  issued: null,
  expires: 0,
  denial: null,
}

type Mapper = (args: { context: OAuthSignInContext }) => FlowOutcome

const sessionChange = (context: OAuthSignInContext): FlowOutcome['session'] =>
  context.issued === null
    ? { op: 'clear' }
    : { op: 'set', value: context.issued, expires: context.expires }

/** The resting outcome: send the browser to the provider. */
export function toProvider(context: OAuthSignInContext): FlowOutcome {
  return { type: 'redirect', url: context.authorizationUrl }
}
const toSignedIn: Mapper = ({ context }) => ({
  type: 'redirect',
  url: context.callbackUrl,
  session: sessionChange(context),
})
const toNewUserPage: Mapper = ({ context }) => {
  const page = context.policy!.newUserUrl!
  const separator = page.includes('?') ? '&' : '?'
  return {
    type: 'redirect',
    url: `${page}${separator}${new URLSearchParams({ callbackUrl: context.callbackUrl })}`,
    session: sessionChange(context),
  }
}
const toSignInRedirect: Mapper = ({ context }) => ({ type: 'redirect', url: context.redirect! })
const toDenial: Mapper = ({ context }) => ({
  type: 'error',
  error: (context.denial?.error ?? 'Configuration') as ErrorType,
  ...(context.denial?.code ? { code: context.denial.code } : {}),
})

/** The OAuth sign-in machine. */
export const oauthSignInMachine = setup({
  types: {} as { context: OAuthSignInContext; events: OAuthSignInEvent; tags: OAuthSignInTag },
  guards: {
    hasAdapter: ({ context }) => context.policy?.hasAdapter === true,
    isDatabaseStrategy: ({ context }) => context.policy?.strategy === 'database',
    isProviderError: ({ event }) => {
      assertEvent(event, 'validateCallback.failed')
      return event.reason === 'providerError'
    },
    hasSignInRedirect: ({ event }) => {
      assertEvent(event, 'checkSignIn.done')
      return event.output.redirect !== null
    },
    isNotLinked: ({ event }) => {
      assertEvent(event, 'linkAccount.failed')
      return event.reason === 'notLinked'
    },
    isNewUserWithPage: ({ context }) => context.isNewUser && context.policy?.newUserUrl != null,
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
      return { tokens: event.output.tokens, codeVerifier: null, nonce: null }
    }),
    rememberProfile: assign(({ event }) => {
      assertEvent(event, 'fetchProfile.done')
      return { profile: event.output.profile, user: event.output.user, account: event.output.account }
    }),
    rememberStoredUser: assign(({ event }) => {
      assertEvent(event, 'lookUpAccount.done')
      return { storedUser: event.output.user }
    }),
    rememberSignInRedirect: assign(({ event }) => {
      assertEvent(event, 'checkSignIn.done')
      return { redirect: event.output.redirect }
    }),
    rememberLinkedUser: assign(({ event }) => {
      assertEvent(event, 'linkAccount.done')
      return { user: event.output.user, account: event.output.account, isNewUser: event.output.isNewUser }
    }),
    rememberIssuedSession: assign(({ event }) => {
      assertEvent(event, ['issueSession.done', 'createDatabaseSession.done'])
      return { issued: event.output.value, expires: event.output.expires }
    }),
    recordDenial: assign(({ event }) => {
      assertEvent(event, [
        'createAuthorizationRequest.failed',
        'validateCallback.failed',
        'exchangeCode.failed',
        'fetchProfile.failed',
        'lookUpAccount.failed',
        'checkSignIn.failed',
        'linkAccount.failed',
        'issueSession.failed',
        'createDatabaseSession.failed',
      ])
      return { denial: { error: event.error ?? 'Configuration', code: event.code ?? null } }
    }),
  },
}).createMachine({
  id: 'oauth-signin',
  version: '1',
  description: 'Signs a user in through an OAuth 2 / OpenID Connect provider.',
  initial: 'idle',
  context: initialContext,
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
          { target: 'checkingSignIn', actions: 'rememberProfile' },
        ],
        'fetchProfile.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    lookingUpAccount: {
      tags: 'effect.lookUpAccount',
      description: 'Finds the user this provider account is linked to, if any.',
      on: {
        'lookUpAccount.done': { target: 'checkingSignIn', actions: 'rememberStoredUser' },
        'lookUpAccount.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    checkingSignIn: {
      tags: 'effect.checkSignIn',
      description: 'Asks the `signIn` callback whether this user may sign in.',
      on: {
        'checkSignIn.done': [
          { guard: 'hasSignInRedirect', target: 'redirectedBySignIn', actions: 'rememberSignInRedirect' },
          { guard: 'hasAdapter', target: 'linkingAccount' },
          { target: 'issuingSession' },
        ],
        'checkSignIn.failed': { target: 'denied', actions: 'recordDenial' },
      },
    },
    linkingAccount: {
      tags: 'effect.linkAccount',
      description: 'Signs in the linked user, links the account, or creates the user; refreshes stored tokens.',
      on: {
        'linkAccount.done': [
          { guard: 'isDatabaseStrategy', target: 'creatingDatabaseSession', actions: 'rememberLinkedUser' },
          { target: 'issuingSession', actions: 'rememberLinkedUser' },
        ],
        'linkAccount.failed': [
          { guard: 'isNotLinked', target: 'notLinked', actions: 'recordDenial' },
          { target: 'failed', actions: 'recordDenial' },
        ],
      },
    },
    issuingSession: {
      tags: 'effect.issueSession',
      description: 'Runs the `jwt` callback (trigger signIn or signUp) and encrypts the session token.',
      on: {
        'issueSession.done': { target: 'announcingSignIn', actions: 'rememberIssuedSession' },
        'issueSession.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    creatingDatabaseSession: {
      tags: 'effect.createDatabaseSession',
      description: 'Stores a new database session for the user.',
      on: {
        'createDatabaseSession.done': { target: 'announcingSignIn', actions: 'rememberIssuedSession' },
        'createDatabaseSession.failed': { target: 'failed', actions: 'recordDenial' },
      },
    },
    announcingSignIn: {
      tags: 'effect.emitSignInEvent',
      description: 'Fires `events.signIn`.',
      on: {
        'emitSignInEvent.done': [
          { guard: 'isNewUserWithPage', target: 'welcomedNewUser' },
          { target: 'signedIn' },
        ],
      },
    },
    signedIn: {
      type: 'final',
      description: 'The session is set; redirect to the callback URL.',
      output: toSignedIn,
    },
    welcomedNewUser: {
      type: 'final',
      description: 'A first sign-in: redirect to `pages.newUser` with the callback URL.',
      output: toNewUserPage,
    },
    redirectedBySignIn: {
      type: 'final',
      description: 'The `signIn` callback returned a URL: redirect there without a session.',
      output: toSignInRedirect,
    },
    refusedByProvider: {
      type: 'final',
      description: 'The provider answered with an error (e.g. access_denied): back to sign-in.',
      output: toDenial,
    },
    denied: {
      type: 'final',
      description: 'The `signIn` callback refused: `AccessDenied`.',
      output: toDenial,
    },
    notLinked: {
      type: 'final',
      description: 'The account or its e-mail belongs to another user: `OAuthAccountNotLinked`.',
      output: toDenial,
    },
    failed: {
      type: 'final',
      description: 'A check or an exchange failed: the Configuration error (reason logged).',
      output: toDenial,
    },
  },
})
