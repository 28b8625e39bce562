/**
 * The session chart's logic: its id, context, events, guards, assignments and outputs, in plain
 * functions (see `shared/logic.ts`). The chart is `session.machine.ts`.
 *
 * Session lifecycle: read (GET /session), update (POST /session) and end (POST /signout) a
 * session, under the `jwt` or the `database` strategy. Each request starts at `idle`, runs through
 * one phase (`jwt`, `database` or `signOut`) and ends in a final state that says how it ended: a
 * session that is over ends in `expired`, `pastAbsoluteLifetime`, `signedOutEverywhere`,
 * `providerLoggedOut`, `revoked`, `tampered` or `unknownSession`, which all answer alike (the body
 * is null, the cookie cleared). The session cookie (or the database row it names) is the persistent
 * state, so nothing is sealed.
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
import type { EffectDone, EffectResult, Timestamped } from './shared/events.js'
import { finalStateOutcome, type FlowOutcome } from './shared/outcome.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

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

/**
 * Why a session that could be read has ended on the server's side: idle past its expiry, past its
 * absolute lifetime, signed out everywhere after it began, or its provider session logged out.
 */
export type SessionEndReason = 'expired' | 'absolute-lifetime' | 'signed-out-everywhere' | 'provider-logout'

type SessionRequest = Timestamped & { policy: SessionPolicy; callbackUrl?: string }

/** Events of the session machine. */
export type SessionEvent =
  | ({ type: 'session.read' } & SessionRequest)
  | ({ type: 'session.update'; data?: unknown } & SessionRequest)
  | ({ type: 'session.signOut'; callbackUrl: string } & SessionRequest)
  | EffectResult<'decodeSessionToken', { token: Record<string, unknown> }, 'missing' | 'invalid' | SessionEndReason>
  | EffectResult<'refreshAccessToken', { token: Record<string, unknown> }, 'rejected' | 'threw'>
  | EffectResult<'runJwtCallback', { token: Record<string, unknown> | null; changed: boolean }, 'threw'>
  | EffectResult<'runSessionCallback', { session: unknown }, 'threw'>
  | EffectResult<'encodeSessionToken', { value: string }, 'threw'>
  | EffectDone<'emitSessionEvent', null>
  | EffectDone<'emitSignOutEvent', null>
  | EffectResult<'buildProviderLogout', { url: string }, 'threw' | 'notLinked'>
  | EffectResult<
      'getSessionAndUser',
      {
        sessionToken: string
        /** When the session ends: the row's `expires`, or its absolute lifetime when that comes first. */
        expires: number
        /** Whether `expires` is the absolute lifetime's end. */
        endsByLifetime?: boolean
        user: Record<string, unknown>
        session: Record<string, unknown>
      },
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

/** The context a session request starts from. */
export const initialContext: SessionContext = {
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
/** A session that ended or cannot be served: the body is null and the cookie cleared, whatever the reason. */
const endedSession = (): FlowOutcome => ({
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

/** The session chart's id. */
export const SESSION = 'session'

type SessionGuard = Guard<SessionContext, SessionEvent>
type SessionAssignment = Assignment<SessionContext, SessionEvent>

/** The chart's guards. */
export const guards = {
  isDatabaseStrategy: ({ event }) => {
    expectEvent(event, ['session.read', 'session.update', 'session.signOut'])
    return event.policy.strategy === 'database'
  },
  isSessionMissing: ({ event }) => {
    expectEvent(event, ['getSessionAndUser.failed', 'deleteSession.failed'])
    return event.reason === 'missing'
  },
  isSessionUnknown: ({ event }) => {
    expectEvent(event, 'getSessionAndUser.failed')
    return event.reason === 'notFound'
  },
  isSessionExpired: ({ event }) => {
    expectEvent(event, 'getSessionAndUser.done')
    return isSessionOver(event.output.expires, event.at)
  },
  isPastAbsoluteLifetime: ({ event }) => {
    expectEvent(event, 'getSessionAndUser.done')
    return event.output.endsByLifetime === true && isSessionOver(event.output.expires, event.at)
  },
  /** Extend when the row was last extended more than `updateAge` ago (0: on every read). */
  isExtensionDue: ({ context, event }) => {
    expectEvent(event, 'getSessionAndUser.done')
    const { maxAge, updateAge } = context.policy!
    return event.output.expires - maxAge + updateAge <= event.at
  },
  isTokenMissing: ({ event }) => {
    expectEvent(event, 'decodeSessionToken.failed')
    return event.reason === 'missing'
  },
  isTokenExpired: ({ event }) => {
    expectEvent(event, 'decodeSessionToken.failed')
    return event.reason === 'expired'
  },
  isTokenPastAbsoluteLifetime: ({ event }) => {
    expectEvent(event, 'decodeSessionToken.failed')
    return event.reason === 'absolute-lifetime'
  },
  isSignedOutEverywhere: ({ event }) => {
    expectEvent(event, 'decodeSessionToken.failed')
    return event.reason === 'signed-out-everywhere'
  },
  isProviderLoggedOut: ({ event }) => {
    expectEvent(event, 'decodeSessionToken.failed')
    return event.reason === 'provider-logout'
  },
  isTokenRevoked: ({ event }) => {
    expectEvent(event, 'runJwtCallback.done')
    return event.output.token === null
  },
  /**
   * Re-encrypt when the client asked for an update, the `jwt` callback changed the token, the
   * token carries no expiry of its own, or `updateAge` has passed since it was issued.
   */
  isAccessTokenExpired: ({ context, event }) => {
    expectEvent(event, 'decodeSessionToken.done')
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
    expectEvent(event, 'runJwtCallback.done')
    return (
      context.request === 'update' ||
      context.tokenChanged ||
      event.output.changed ||
      tokenExpiry(event.output.token) === undefined ||
      event.at >= tokenIssuedAt(event.output.token) + context.policy!.updateAge
    )
  },
  isReissueScheduled: ({ context }) => context.reissue,
} satisfies Record<string, SessionGuard>

/** The chart's assignments. */
export const assignments = {
  rememberRequest: ({ event }) => {
    expectEvent(event, ['session.read', 'session.update', 'session.signOut'])
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
  },
  rememberToken: ({ event }) => {
    expectEvent(event, 'decodeSessionToken.done')
    return { token: event.output.token }
  },
  rememberAccountRefresh: ({ event }) => {
    expectEvent(event, 'refreshAccountTokens.done')
    return { refreshError: event.output.rejected }
  },
  rememberLogoutUrl: ({ event }) => {
    expectEvent(event, 'buildProviderLogout.done')
    return { logoutUrl: event.output.url }
  },
  rememberRefreshedToken: ({ event }) => {
    expectEvent(event, 'refreshAccessToken.done')
    return { token: event.output.token, tokenChanged: true }
  },
  // The session stays; the application sees `error` and decides. A refresh token the provider
  // rejected is dropped so it is not replayed on every read; after a network failure it is kept.
  recordRefreshError: ({ context, event }) => {
    expectEvent(event, 'refreshAccessToken.failed')
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
  },
  scheduleReissue: ({ context, event }) => {
    expectEvent(event, 'runJwtCallback.done')
    return { token: event.output.token, reissue: true, expires: event.at + context.policy!.maxAge }
  },
  keepExpiry: ({ event }) => {
    expectEvent(event, 'runJwtCallback.done')
    return { token: event.output.token, reissue: false, expires: tokenExpiry(event.output.token)! }
  },
  rememberSession: ({ event }) => {
    expectEvent(event, 'runSessionCallback.done')
    return { session: event.output.session }
  },
  rememberIssuedToken: ({ event }) => {
    expectEvent(event, 'encodeSessionToken.done')
    return { issued: event.output.value }
  },
  rememberStoredSession: ({ event }) => {
    expectEvent(event, 'getSessionAndUser.done')
    return {
      sessionToken: event.output.sessionToken,
      expires: event.output.expires,
      user: event.output.user,
      storedSession: event.output.session,
    }
  },
  rememberExtension: ({ context, event }) => {
    expectEvent(event, 'extendSession.done')
    return { expires: event.output.expires, issued: context.sessionToken }
  },
  rememberDeletedSession: ({ event }) => {
    expectEvent(event, 'deleteSession.done')
    return { session: event.output.session }
  },
  rememberDatabaseSession: ({ event }) => {
    expectEvent(event, 'runDatabaseSessionCallback.done')
    return { session: event.output.session }
  },
} satisfies Record<string, SessionAssignment>

/** The chart's outputs. */
export const outputs = {
  finalStateOutcome,
  activeSession,
  noSession,
  endedSession,
  signedOut,
  signOutFailed,
  leftWithoutSession,
}
