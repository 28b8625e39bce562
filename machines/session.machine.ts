/**
 * Session lifecycle: read (GET /session), update (POST /session) and end (POST /signout) a
 * session, under the `jwt` or the `database` strategy. Each request starts at `idle` and ends in a
 * final state; the session cookie (or the database row it names) is the persistent state, so
 * nothing is sealed.
 *
 * A JWT is re-encrypted only when it changed or `updateAge` has passed since it was issued, so most
 * reads cost a decryption and nothing else (spec §2.15: `updateAge` is how often it is updated).
 * A database session is extended under the same rule, and its cookie is rewritten exactly when the
 * row is, so the cookie's expiry always equals the stored one.
 *
 * @module
 */
import {
  array,
  boolean,
  enums,
  nullable,
  number,
  object,
  optional,
  record,
  string,
  unknown,
  type Infer,
} from 'superstruct'
import { assertEvent, assign, setup } from 'xstate'
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { finalStateOutcome, type FlowOutcome } from './shared/outcome.js'

/** Settings the HTTP layer copies from the config into each request event. */
export const SessionPolicy = object({
  strategy: enums(['jwt', 'database']),
  /** Seconds a session lives without activity. */
  maxAge: number(),
  /** Seconds between refreshes of its expiry. */
  updateAge: number(),
  /** Providers whose expired access tokens are refreshed on the session path (opt-in). */
  refreshProviders: optional(array(string())),
  /** OIDC providers the user is also signed out of, through their `end_session_endpoint` (opt-in). */
  logoutProviders: optional(array(string())),
})
export type SessionPolicy = Infer<typeof SessionPolicy>

/** Context of the session machine. */
export const SessionContext = object({
  policy: nullable(SessionPolicy),
  request: enums(['none', 'read', 'update', 'signOut']),
  /** Data sent with POST /session, passed to the `jwt` callback. */
  data: optional(unknown()),
  callbackUrl: string(),
  /** Where sign-out sends the browser instead: the provider's end-session URL (RP-initiated logout). */
  logoutUrl: nullable(string()),
  /** Claims of the session token. */
  token: nullable(record(string(), unknown())),
  /** Epoch seconds at which the session expires, as reported to the client. */
  expires: number(),
  reissue: boolean(),
  /** The token changed before the `jwt` callback ran (its access token was refreshed). */
  tokenChanged: boolean(),
  /** Database strategy: the provider refused to refresh a linked account's tokens. */
  refreshError: boolean(),
  /** The response body: the `session` callback's result. */
  session: unknown(),
  /** The cookie value to (re)issue: a new JWT, or the database session token when extended. */
  issued: nullable(string()),
  /** Database strategy: the stored session's token and the user it belongs to. */
  sessionToken: nullable(string()),
  user: nullable(record(string(), unknown())),
  /** Database strategy: the stored session as the adapter returned it (its `id`, added columns). */
  storedSession: nullable(record(string(), unknown())),
})
export type SessionContext = Infer<typeof SessionContext>

type SessionRequest = Timestamped & { policy: SessionPolicy; callbackUrl?: string }

/** Events of the session machine. */
export type SessionEvent =
  | ({ type: 'session.read' } & SessionRequest)
  | ({ type: 'session.update'; data?: unknown } & SessionRequest)
  | ({ type: 'session.signOut'; callbackUrl: string } & SessionRequest)
  | EffectResult<'decodeSessionToken', { token: Record<string, unknown> }, 'missing' | 'invalid'>
  | EffectResult<'refreshAccessToken', { token: Record<string, unknown> }, 'rejected' | 'threw'>
  | EffectResult<'runJwtCallback', { token: Record<string, unknown> | null; changed: boolean }, 'threw'>
  | EffectResult<'runSessionCallback', { session: unknown }, 'threw'>
  | EffectResult<'encodeSessionToken', { value: string }, 'threw'>
  | EffectDone<'emitSessionEvent', null>
  | EffectDone<'emitSignOutEvent', null>
  | EffectResult<'buildProviderLogout', { url: string }, 'threw' | 'notLinked'>
  | EffectResult<
      'getSessionAndUser',
      { sessionToken: string; expires: number; user: Record<string, unknown>; session: Record<string, unknown> },
      'missing' | 'notFound' | 'threw'
    >
  | EffectResult<'deleteExpiredSession', null, 'threw'>
  | EffectResult<'extendSession', { expires: number }, 'threw'>
  | EffectResult<'runDatabaseSessionCallback', { session: unknown }, 'threw'>
  | EffectDone<'refreshAccountTokens', { rejected: boolean }>
  | EffectResult<'deleteSession', { session: unknown }, 'missing' | 'threw'>

/** Tags: effect states and the resting state. */
export type SessionTag =
  | 'awaitsRequest'
  | 'effect.decodeSessionToken'
  | 'effect.refreshAccessToken'
  | 'effect.runJwtCallback'
  | 'effect.runSessionCallback'
  | 'effect.encodeSessionToken'
  | 'effect.emitSessionEvent'
  | 'effect.emitSignOutEvent'
  | 'effect.buildProviderLogout'
  | 'effect.getSessionAndUser'
  | 'effect.deleteExpiredSession'
  | 'effect.extendSession'
  | 'effect.runDatabaseSessionCallback'
  | 'effect.refreshAccountTokens'
  | 'effect.deleteSession'

const initialContext: SessionContext = {
  policy: null,
  request: 'none',
  data: undefined,
  callbackUrl: '',
  logoutUrl: null,
  token: null,
  expires: 0,
  reissue: false,
  tokenChanged: false,
  refreshError: false,
  session: null,
  issued: null,
  sessionToken: null,
  user: null,
  storedSession: null,
}

const noSession = (): FlowOutcome => ({ type: 'json', body: null, cache: 'no-store' })
const invalidSession = (): FlowOutcome => ({
  type: 'json',
  body: null,
  cache: 'no-store',
  session: { op: 'clear' },
})
const activeSession = ({ context }: { context: SessionContext }): FlowOutcome => ({
  type: 'json',
  body: context.session,
  // POST /session answers without the no-cache trio, as Auth.js does.
  ...(context.request === 'read' ? { cache: 'no-store' as const } : {}),
  ...(context.issued !== null
    ? { session: { op: 'set' as const, value: context.issued, expires: context.expires } }
    : {}),
})
const signedOut = ({ context }: { context: SessionContext }): FlowOutcome => ({
  type: 'redirect',
  url: context.logoutUrl ?? context.callbackUrl,
  session: { op: 'clear' },
})
// The row could not be deleted, so a copy of the cookie may still open the session: the browser's
// copy is cleared, but the answer is the error, never the success redirect.
const signOutFailed = (): FlowOutcome => ({
  type: 'error',
  error: 'SignOutError',
  session: { op: 'clear' },
})
const leftWithoutSession = ({ context }: { context: SessionContext }): FlowOutcome => ({
  type: 'redirect',
  url: context.callbackUrl,
})

/**
 * Whether a stored session whose end is `expires` (epoch seconds) is over at `at`: only after that
 * second, as Auth.js's `expires < now`. The one comparison for the session route and for every
 * path that acts for the signed-in user (`core/session/current.ts`).
 */
export function isSessionOver(expires: number, at: number): boolean {
  return expires < at
}

const tokenExpiry = (token: Record<string, unknown> | null): number | undefined =>
  typeof token?.exp === 'number' ? token.exp : undefined
/** An access token this close to expiry (seconds) is refreshed already. */
export const ACCESS_TOKEN_LEEWAY = 30

/** The provider tokens a JWT carries when its provider refreshes them (`token.oauth`). */
export interface SessionOAuthTokens {
  provider: string
  access_token?: string
  refresh_token?: string
  expires_at?: number
  /** Kept for RP-initiated logout (`id_token_hint`). */
  id_token?: string
  /** The session's DPoP key pair, sealed with the secret (providers with `dpop: true`). */
  dpop_key?: string
}

const oauthTokensOf = (token: Record<string, unknown> | null): SessionOAuthTokens | undefined => {
  const oauth = token?.oauth
  return oauth && typeof oauth === 'object' ? (oauth as SessionOAuthTokens) : undefined
}

const tokenIssuedAt = (token: Record<string, unknown> | null): number =>
  typeof token?.iat === 'number' ? token.iat : 0

/** The session lifecycle machine. */
export const sessionMachine = setup({
  types: {} as { context: SessionContext; events: SessionEvent; tags: SessionTag },
  guards: {
    isDatabaseStrategy: ({ event }) => {
      assertEvent(event, ['session.read', 'session.update', 'session.signOut'])
      return event.policy.strategy === 'database'
    },
    isSessionMissing: ({ event }) => {
      assertEvent(event, ['getSessionAndUser.failed', 'deleteSession.failed'])
      return event.reason === 'missing'
    },
    isSessionUnknown: ({ event }) => {
      assertEvent(event, 'getSessionAndUser.failed')
      return event.reason === 'notFound'
    },
    isSessionExpired: ({ event }) => {
      assertEvent(event, 'getSessionAndUser.done')
      return isSessionOver(event.output.expires, event.at)
    },
    /** Extend when the row was last extended more than `updateAge` ago (0: on every read). */
    isExtensionDue: ({ context, event }) => {
      assertEvent(event, 'getSessionAndUser.done')
      const { maxAge, updateAge } = context.policy!
      return event.output.expires - maxAge + updateAge <= event.at
    },
    isTokenMissing: ({ event }) => {
      assertEvent(event, 'decodeSessionToken.failed')
      return event.reason === 'missing'
    },
    isTokenRevoked: ({ event }) => {
      assertEvent(event, 'runJwtCallback.done')
      return event.output.token === null
    },
    /**
     * Re-encrypt when the client asked for an update, the `jwt` callback changed the token, the
     * token carries no expiry of its own, or `updateAge` has passed since it was issued.
     */
    isAccessTokenExpired: ({ context, event }) => {
      assertEvent(event, 'decodeSessionToken.done')
      const oauth = oauthTokensOf(event.output.token)
      return (
        oauth !== undefined &&
        (context.policy?.refreshProviders ?? []).includes(oauth.provider) &&
        typeof oauth.refresh_token === 'string' &&
        typeof oauth.expires_at === 'number' &&
        oauth.expires_at <= event.at + ACCESS_TOKEN_LEEWAY
      )
    },
    refreshesTokens: ({ context }) => (context.policy?.refreshProviders?.length ?? 0) > 0,
    isProviderLogoutWanted: ({ context }) => {
      const logoutProviders = context.policy?.logoutProviders ?? []
      if (context.policy?.strategy === 'database') {
        // The ended row names the user; the linked account's ID token is looked up by the effect.
        return logoutProviders.length > 0 && context.session !== null && typeof context.session === 'object'
      }
      const oauth = oauthTokensOf(context.token)
      return (
        oauth !== undefined &&
        typeof oauth.id_token === 'string' &&
        logoutProviders.includes(oauth.provider)
      )
    },
    isReissueDue: ({ context, event }) => {
      assertEvent(event, 'runJwtCallback.done')
      return (
        context.request === 'update' ||
        context.tokenChanged ||
        event.output.changed ||
        tokenExpiry(event.output.token) === undefined ||
        event.at >= tokenIssuedAt(event.output.token) + context.policy!.updateAge
      )
    },
    isReissueScheduled: ({ context }) => context.reissue,
  },
  actions: {
    rememberRequest: assign(({ event }) => {
      assertEvent(event, ['session.read', 'session.update', 'session.signOut'])
      return {
        policy: event.policy,
        request:
          event.type === 'session.read'
            ? ('read' as const)
            : event.type === 'session.update'
              ? ('update' as const)
              : ('signOut' as const),
        data: event.type === 'session.update' ? event.data : undefined,
        callbackUrl: event.callbackUrl ?? '',
      }
    }),
    rememberToken: assign(({ event }) => {
      assertEvent(event, 'decodeSessionToken.done')
      return { token: event.output.token }
    }),
    rememberAccountRefresh: assign(({ event }) => {
      assertEvent(event, 'refreshAccountTokens.done')
      return { refreshError: event.output.rejected }
    }),
    rememberLogoutUrl: assign(({ event }) => {
      assertEvent(event, 'buildProviderLogout.done')
      return { logoutUrl: event.output.url }
    }),
    rememberRefreshedToken: assign(({ event }) => {
      assertEvent(event, 'refreshAccessToken.done')
      return { token: event.output.token, tokenChanged: true }
    }),
    // The session stays; the application sees `error` and decides. A refresh token the provider
    // rejected is dropped so it is not replayed on every read; after a network failure it is kept.
    recordRefreshError: assign(({ context, event }) => {
      assertEvent(event, 'refreshAccessToken.failed')
      const oauth = oauthTokensOf(context.token)
      const { refresh_token: _dropped, ...withoutRefreshToken } = oauth ?? { provider: '' }
      return {
        token: {
          ...context.token,
          error: 'RefreshTokenError',
          ...(event.reason === 'rejected' ? { oauth: withoutRefreshToken } : {}),
        },
        tokenChanged: true,
      }
    }),
    scheduleReissue: assign(({ context, event }) => {
      assertEvent(event, 'runJwtCallback.done')
      return { token: event.output.token, reissue: true, expires: event.at + context.policy!.maxAge }
    }),
    keepExpiry: assign(({ event }) => {
      assertEvent(event, 'runJwtCallback.done')
      return { token: event.output.token, reissue: false, expires: tokenExpiry(event.output.token)! }
    }),
    rememberSession: assign(({ event }) => {
      assertEvent(event, 'runSessionCallback.done')
      return { session: event.output.session }
    }),
    rememberIssuedToken: assign(({ event }) => {
      assertEvent(event, 'encodeSessionToken.done')
      return { issued: event.output.value }
    }),
    rememberStoredSession: assign(({ event }) => {
      assertEvent(event, 'getSessionAndUser.done')
      return {
        sessionToken: event.output.sessionToken,
        expires: event.output.expires,
        user: event.output.user,
        storedSession: event.output.session,
      }
    }),
    rememberExtension: assign(({ context, event }) => {
      assertEvent(event, 'extendSession.done')
      return { expires: event.output.expires, issued: context.sessionToken }
    }),
    rememberDeletedSession: assign(({ event }) => {
      assertEvent(event, 'deleteSession.done')
      return { session: event.output.session }
    }),
    rememberDatabaseSession: assign(({ event }) => {
      assertEvent(event, 'runDatabaseSessionCallback.done')
      return { session: event.output.session }
    }),
  },
}).createMachine({
  id: 'session',
  version: '1',
  description: 'Reads, refreshes, updates and ends the session carried by the session cookie.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'A request about the session arrives.',
      on: {
        'session.read': [
          { guard: 'isDatabaseStrategy', target: 'lookingUpSession', actions: 'rememberRequest' },
          { target: 'decodingToken', actions: 'rememberRequest' },
        ],
        'session.update': [
          { guard: 'isDatabaseStrategy', target: 'lookingUpSession', actions: 'rememberRequest' },
          { target: 'decodingToken', actions: 'rememberRequest' },
        ],
        'session.signOut': [
          { guard: 'isDatabaseStrategy', target: 'deletingSession', actions: 'rememberRequest' },
          { target: 'decodingTokenToEnd', actions: 'rememberRequest' },
        ],
      },
    },
    lookingUpSession: {
      tags: 'effect.getSessionAndUser',
      description: 'Looks the session token up in the database, with its user.',
      on: {
        'getSessionAndUser.done': [
          { guard: 'isSessionExpired', target: 'deletingExpiredSession' },
          { guard: 'isExtensionDue', target: 'extendingSession', actions: 'rememberStoredSession' },
          { guard: 'refreshesTokens', target: 'refreshingAccountTokens', actions: 'rememberStoredSession' },
          { target: 'runningDatabaseSessionCallback', actions: 'rememberStoredSession' },
        ],
        'getSessionAndUser.failed': [
          { guard: 'isSessionMissing', target: 'noSession' },
          { guard: 'isSessionUnknown', target: 'invalidSession' },
          { target: 'sessionUnavailable' },
        ],
      },
    },
    deletingExpiredSession: {
      tags: 'effect.deleteExpiredSession',
      description: 'Deletes the expired row.',
      on: {
        'deleteExpiredSession.done': { target: 'invalidSession' },
        'deleteExpiredSession.failed': { target: 'invalidSession' },
      },
    },
    extendingSession: {
      tags: 'effect.extendSession',
      description: 'Moves the stored expiry to now + maxAge (at most once per updateAge).',
      on: {
        'extendSession.done': [
          { guard: 'refreshesTokens', target: 'refreshingAccountTokens', actions: 'rememberExtension' },
          { target: 'runningDatabaseSessionCallback', actions: 'rememberExtension' },
        ],
        'extendSession.failed': { target: 'sessionUnavailable' },
      },
    },
    refreshingAccountTokens: {
      tags: 'effect.refreshAccountTokens',
      description:
        "Refreshes the expired access tokens of the user's linked accounts, once however many requests race; a database outage skips it.",
      on: {
        'refreshAccountTokens.done': { target: 'runningDatabaseSessionCallback', actions: 'rememberAccountRefresh' },
      },
    },
    runningDatabaseSessionCallback: {
      tags: 'effect.runDatabaseSessionCallback',
      description: 'Builds the client-facing session from the stored user through the `session` callback.',
      on: {
        'runDatabaseSessionCallback.done': {
          target: 'announcingSession',
          actions: 'rememberDatabaseSession',
        },
        'runDatabaseSessionCallback.failed': { target: 'sessionUnavailable' },
      },
    },
    sessionUnavailable: {
      type: 'final',
      description: 'The database failed: the body is null and the cookie is kept for a retry.',
      output: noSession,
    },
    deletingSession: {
      tags: 'effect.deleteSession',
      description: 'Deletes the database session being signed out.',
      on: {
        'deleteSession.done': { target: 'announcingSignOut', actions: 'rememberDeletedSession' },
        'deleteSession.failed': [
          { guard: 'isSessionMissing', target: 'leftWithoutSession' },
          { target: 'signOutFailed' },
        ],
      },
    },
    decodingToken: {
      tags: 'effect.decodeSessionToken',
      description: 'Decrypts the session cookie and checks its expiry.',
      on: {
        'decodeSessionToken.done': [
          { guard: 'isAccessTokenExpired', target: 'refreshingAccessToken', actions: 'rememberToken' },
          { target: 'runningJwtCallback', actions: 'rememberToken' },
        ],
        'decodeSessionToken.failed': [
          { guard: 'isTokenMissing', target: 'noSession' },
          { target: 'invalidSession' },
        ],
      },
    },
    refreshingAccessToken: {
      tags: 'effect.refreshAccessToken',
      description:
        "The provider's access token has expired: refresh it once, however many requests arrive with this cookie.",
      on: {
        'refreshAccessToken.done': { target: 'runningJwtCallback', actions: 'rememberRefreshedToken' },
        'refreshAccessToken.failed': { target: 'runningJwtCallback', actions: 'recordRefreshError' },
      },
    },
    runningJwtCallback: {
      tags: 'effect.runJwtCallback',
      description: 'Lets the `jwt` callback refresh or revoke the token.',
      on: {
        'runJwtCallback.done': [
          { guard: 'isTokenRevoked', target: 'revoked' },
          { guard: 'isReissueDue', target: 'runningSessionCallback', actions: 'scheduleReissue' },
          { target: 'runningSessionCallback', actions: 'keepExpiry' },
        ],
        'runJwtCallback.failed': { target: 'invalidSession' },
      },
    },
    runningSessionCallback: {
      tags: 'effect.runSessionCallback',
      description: 'Builds the client-facing session through the `session` callback.',
      on: {
        'runSessionCallback.done': [
          { guard: 'isReissueScheduled', target: 'encodingToken', actions: 'rememberSession' },
          { target: 'announcingSession', actions: 'rememberSession' },
        ],
        'runSessionCallback.failed': { target: 'invalidSession' },
      },
    },
    encodingToken: {
      tags: 'effect.encodeSessionToken',
      description: 'Encrypts the refreshed token with a new expiry.',
      on: {
        'encodeSessionToken.done': { target: 'announcingSession', actions: 'rememberIssuedToken' },
        'encodeSessionToken.failed': { target: 'invalidSession' },
      },
    },
    announcingSession: {
      tags: 'effect.emitSessionEvent',
      description: 'Fires `events.session`.',
      on: { 'emitSessionEvent.done': { target: 'active' } },
    },
    active: {
      type: 'final',
      description: 'The session is valid and returned to the client.',
      output: activeSession,
    },
    noSession: {
      type: 'final',
      description: 'There is no session cookie: the body is null.',
      output: noSession,
    },
    invalidSession: {
      type: 'final',
      description: 'The cookie is tampered, expired or unusable: it is cleared, the body is null.',
      output: invalidSession,
    },
    revoked: {
      type: 'final',
      description: 'The `jwt` callback returned null: the session is ended.',
      output: invalidSession,
    },
    decodingTokenToEnd: {
      tags: 'effect.decodeSessionToken',
      description: 'Decrypts the session cookie of the session being signed out.',
      on: {
        'decodeSessionToken.done': { target: 'announcingSignOut', actions: 'rememberToken' },
        'decodeSessionToken.failed': [
          { guard: 'isTokenMissing', target: 'leftWithoutSession' },
          { target: 'signedOut' },
        ],
      },
    },
    announcingSignOut: {
      tags: 'effect.emitSignOutEvent',
      description: 'Fires `events.signOut` with the ended token or database session.',
      on: {
        'emitSignOutEvent.done': [
          { guard: 'isProviderLogoutWanted', target: 'buildingProviderLogout' },
          { target: 'signedOut' },
        ],
      },
    },
    buildingProviderLogout: {
      tags: 'effect.buildProviderLogout',
      description: "Builds the OIDC provider's end-session URL, so the user leaves the provider too.",
      on: {
        'buildProviderLogout.done': { target: 'signedOut', actions: 'rememberLogoutUrl' },
        // Our session is over either way; only the provider's stays.
        'buildProviderLogout.failed': { target: 'signedOut' },
      },
    },
    signedOut: {
      type: 'final',
      description: 'Every session cookie chunk is cleared; redirect to the callback URL.',
      output: signedOut,
    },
    signOutFailed: {
      type: 'final',
      description:
        'The database could not delete the session, which may still be live: the cookie is cleared and the error reported.',
      output: signOutFailed,
    },
    leftWithoutSession: {
      type: 'final',
      description: 'Sign-out without a session: redirect to the callback URL.',
      output: leftWithoutSession,
    },
  },
})
