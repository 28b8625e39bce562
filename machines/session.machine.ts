/**
 * Session lifecycle: read (GET /session), update (POST /session) and end (POST /signout) a
 * session, under the `jwt` or the `database` strategy. The chart's logic (context, guards,
 * assignments, outputs) is `session.logic.ts`; this is the notation the diagrams, the model-based
 * tests and the chart compiler read (the engine runs the compiled chart, `core/charts/session.ts`).
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  guards,
  initialContext,
  outputs,
  SESSION,
  type SessionContext,
  type SessionEvent,
  type SessionTag,
} from './session.logic.js'

export {
  ACCESS_TOKEN_LEEWAY,
  isSessionOver,
  SESSION,
  SessionContext,
  SessionPolicy,
  type SessionEndReason,
  type SessionEvent,
  type SessionOAuthTokens,
  type SessionTag,
} from './session.logic.js'

/** The session lifecycle machine. */
export const sessionMachine = setup({
  types: {} as { context: SessionContext; events: SessionEvent; tags: SessionTag },
  guards,
  actions: {
    rememberRequest: assign(assignments.rememberRequest),
    rememberToken: assign(assignments.rememberToken),
    rememberAccountRefresh: assign(assignments.rememberAccountRefresh),
    rememberLogoutUrl: assign(assignments.rememberLogoutUrl),
    rememberRefreshedToken: assign(assignments.rememberRefreshedToken),
    recordRefreshError: assign(assignments.recordRefreshError),
    scheduleReissue: assign(assignments.scheduleReissue),
    keepExpiry: assign(assignments.keepExpiry),
    rememberSession: assign(assignments.rememberSession),
    rememberIssuedToken: assign(assignments.rememberIssuedToken),
    rememberStoredSession: assign(assignments.rememberStoredSession),
    rememberExtension: assign(assignments.rememberExtension),
    rememberDeletedSession: assign(assignments.rememberDeletedSession),
    rememberDatabaseSession: assign(assignments.rememberDatabaseSession),
  },
}).createMachine({
  id: SESSION,
  version: '2',
  description: 'Reads, refreshes, updates and ends the session carried by the session cookie.',
  initial: 'idle',
  context: initialContext,
  output: outputs.finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description: 'A request about the session arrives.',
      on: {
        'session.read': [
          { guard: 'isDatabaseStrategy', target: 'database', actions: 'rememberRequest' },
          { target: 'jwt', actions: 'rememberRequest' },
        ],
        'session.update': [
          { guard: 'isDatabaseStrategy', target: 'database', actions: 'rememberRequest' },
          { target: 'jwt', actions: 'rememberRequest' },
        ],
        'session.signOut': [
          { guard: 'isDatabaseStrategy', target: 'signOut.deletingSession', actions: 'rememberRequest' },
          { target: 'signOut.decodingToken', actions: 'rememberRequest' },
        ],
      },
    },
    jwt: {
      description: 'JWT strategy: the session is the encrypted token in the cookie.',
      initial: 'decodingToken',
      states: {
        decodingToken: {
          tags: 'effect.decodeSessionToken',
          description: 'Decrypts the session cookie and checks that its session has not ended.',
          on: {
            'decodeSessionToken.done': [
              { guard: 'isAccessTokenExpired', target: 'refreshingAccessToken', actions: 'rememberToken' },
              { target: 'runningJwtCallback', actions: 'rememberToken' },
            ],
            'decodeSessionToken.failed': [
              { guard: 'isTokenMissing', target: '#session.noSession' },
              { guard: 'isTokenExpired', target: '#session.expired' },
              { guard: 'isTokenPastAbsoluteLifetime', target: '#session.pastAbsoluteLifetime' },
              { guard: 'isSignedOutEverywhere', target: '#session.signedOutEverywhere' },
              { guard: 'isProviderLoggedOut', target: '#session.providerLoggedOut' },
              { target: '#session.tampered' },
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
              { guard: 'isTokenRevoked', target: '#session.revoked' },
              { guard: 'isReissueDue', target: 'runningSessionCallback', actions: 'scheduleReissue' },
              { target: 'runningSessionCallback', actions: 'keepExpiry' },
            ],
            'runJwtCallback.failed': { target: '#session.callbackFailed' },
          },
        },
        runningSessionCallback: {
          tags: 'effect.runSessionCallback',
          description: 'Builds the client-facing session through the `session` callback.',
          on: {
            'runSessionCallback.done': [
              { guard: 'isReissueScheduled', target: 'encodingToken', actions: 'rememberSession' },
              { target: '#session.announcingSession', actions: 'rememberSession' },
            ],
            'runSessionCallback.failed': { target: '#session.callbackFailed' },
          },
        },
        encodingToken: {
          tags: 'effect.encodeSessionToken',
          description: 'Encrypts the refreshed token with a new expiry.',
          on: {
            'encodeSessionToken.done': { target: '#session.announcingSession', actions: 'rememberIssuedToken' },
            'encodeSessionToken.failed': { target: '#session.callbackFailed' },
          },
        },
      },
    },
    database: {
      description: 'Database strategy: the cookie names a stored session row.',
      initial: 'lookingUpSession',
      states: {
        lookingUpSession: {
          tags: 'effect.getSessionAndUser',
          description: 'Looks the session token up in the database, with its user.',
          on: {
            'getSessionAndUser.done': [
              { guard: 'isPastAbsoluteLifetime', target: 'deletingSessionPastLifetime' },
              { guard: 'isSessionExpired', target: 'deletingExpiredSession' },
              { guard: 'isExtensionDue', target: 'extendingSession', actions: 'rememberStoredSession' },
              { guard: 'refreshesTokens', target: 'refreshingAccountTokens', actions: 'rememberStoredSession' },
              { target: 'runningSessionCallback', actions: 'rememberStoredSession' },
            ],
            'getSessionAndUser.failed': [
              { guard: 'isSessionMissing', target: '#session.noSession' },
              { guard: 'isSessionUnknown', target: '#session.unknownSession' },
              { target: '#session.sessionUnavailable' },
            ],
          },
        },
        deletingExpiredSession: {
          tags: 'effect.deleteExpiredSession',
          description: 'Deletes the row whose idle expiry has passed.',
          on: {
            'deleteExpiredSession.done': { target: '#session.expired' },
            'deleteExpiredSession.failed': { target: '#session.expired' },
          },
        },
        deletingSessionPastLifetime: {
          tags: 'effect.deleteExpiredSession',
          description: 'Deletes the row past its absolute lifetime, however recently it was used.',
          on: {
            'deleteExpiredSession.done': { target: '#session.pastAbsoluteLifetime' },
            'deleteExpiredSession.failed': { target: '#session.pastAbsoluteLifetime' },
          },
        },
        extendingSession: {
          tags: 'effect.extendSession',
          description: 'Moves the stored expiry to now + maxAge (at most once per updateAge).',
          on: {
            'extendSession.done': [
              { guard: 'refreshesTokens', target: 'refreshingAccountTokens', actions: 'rememberExtension' },
              { target: 'runningSessionCallback', actions: 'rememberExtension' },
            ],
            'extendSession.failed': { target: '#session.sessionUnavailable' },
          },
        },
        refreshingAccountTokens: {
          tags: 'effect.refreshAccountTokens',
          description:
            "Refreshes the expired access tokens of the user's linked accounts, once however many requests race; a database outage skips it.",
          on: {
            'refreshAccountTokens.done': { target: 'runningSessionCallback', actions: 'rememberAccountRefresh' },
          },
        },
        runningSessionCallback: {
          tags: 'effect.runDatabaseSessionCallback',
          description: 'Builds the client-facing session from the stored user through the `session` callback.',
          on: {
            'runDatabaseSessionCallback.done': {
              target: '#session.announcingSession',
              actions: 'rememberDatabaseSession',
            },
            'runDatabaseSessionCallback.failed': { target: '#session.sessionUnavailable' },
          },
        },
      },
    },
    announcingSession: {
      tags: 'effect.emitSessionEvent',
      description: 'Fires `events.session`.',
      on: { 'emitSessionEvent.done': { target: 'active' } },
    },
    signOut: {
      description: 'Sign-out: the session ends here, whatever the strategy.',
      initial: 'decodingToken',
      states: {
        decodingToken: {
          tags: 'effect.decodeSessionToken',
          description: 'Decrypts the session cookie of the session being signed out.',
          on: {
            'decodeSessionToken.done': { target: 'announcingSignOut', actions: 'rememberToken' },
            'decodeSessionToken.failed': [
              { guard: 'isTokenMissing', target: '#session.leftWithoutSession' },
              { target: '#session.signedOut' },
            ],
          },
        },
        deletingSession: {
          tags: 'effect.deleteSession',
          description: 'Deletes the database session being signed out.',
          on: {
            'deleteSession.done': { target: 'announcingSignOut', actions: 'rememberDeletedSession' },
            'deleteSession.failed': [
              { guard: 'isSessionMissing', target: '#session.leftWithoutSession' },
              { target: '#session.signOutFailed' },
            ],
          },
        },
        announcingSignOut: {
          tags: 'effect.emitSignOutEvent',
          description: 'Fires `events.signOut` with the ended token or database session.',
          on: {
            'emitSignOutEvent.done': [
              { guard: 'isProviderLogoutWanted', target: 'buildingProviderLogout' },
              { target: '#session.signedOut' },
            ],
          },
        },
        buildingProviderLogout: {
          tags: 'effect.buildProviderLogout',
          description: "Builds the OIDC provider's end-session URL, so the user leaves the provider too.",
          on: {
            'buildProviderLogout.done': { target: '#session.signedOut', actions: 'rememberLogoutUrl' },
            // Our session is over either way; only the provider's stays.
            'buildProviderLogout.failed': { target: '#session.signedOut' },
          },
        },
      },
    },
    active: {
      type: 'final',
      description: 'The session is valid and returned to the client.',
      output: outputs.activeSession,
    },
    noSession: {
      type: 'final',
      description: 'There is no session cookie: the body is null.',
      output: outputs.noSession,
    },
    sessionUnavailable: {
      type: 'final',
      description: 'The database failed: the body is null and the cookie is kept for a retry.',
      output: outputs.noSession,
    },
    tampered: {
      type: 'final',
      description:
        'The cookie cannot be read (tampered, truncated, or sealed with a secret no longer configured): it is cleared, the body is null.',
      output: outputs.endedSession,
    },
    unknownSession: {
      type: 'final',
      description:
        'No stored session has this token (forged, or its row was deleted: signed out elsewhere, revoked): the cookie is cleared.',
      output: outputs.endedSession,
    },
    expired: {
      type: 'final',
      description: 'The session was idle past its expiry (`maxAge`): the cookie is cleared, the body is null.',
      output: outputs.endedSession,
    },
    pastAbsoluteLifetime: {
      type: 'final',
      description:
        'The session outlived its absolute lifetime (`absoluteMaxAge` since sign-in), however active: the cookie is cleared.',
      output: outputs.endedSession,
    },
    signedOutEverywhere: {
      type: 'final',
      description: 'The user signed out everywhere after this session began: the cookie is cleared.',
      output: outputs.endedSession,
    },
    providerLoggedOut: {
      type: 'final',
      description:
        'The identity provider ended the provider session this one was signed in with (back- or front-channel logout): the cookie is cleared.',
      output: outputs.endedSession,
    },
    revoked: {
      type: 'final',
      description: 'The `jwt` callback returned null: the session is ended.',
      output: outputs.endedSession,
    },
    callbackFailed: {
      type: 'final',
      description:
        'The `jwt` or `session` callback, or the token encoder, threw: the error is logged, the cookie cleared, the body null.',
      output: outputs.endedSession,
    },
    signedOut: {
      type: 'final',
      description: 'Every session cookie chunk is cleared; redirect to the callback URL.',
      output: outputs.signedOut,
    },
    signOutFailed: {
      type: 'final',
      description:
        'The database could not delete the session, which may still be live: the cookie is cleared and the error reported.',
      output: outputs.signOutFailed,
    },
    leftWithoutSession: {
      type: 'final',
      description: 'Sign-out without a session: redirect to the callback URL.',
      output: outputs.leftWithoutSession,
    },
  },
})
