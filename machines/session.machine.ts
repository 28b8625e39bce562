/**
 * Session lifecycle: read (GET /session), update (POST /session) and end (POST /signout) a
 * session, under the `jwt` strategy. Each request starts at `idle` and ends in a final state;
 * the session cookie itself is the persistent state, so nothing is sealed.
 *
 * A JWT is re-encrypted only when it changed or `updateAge` has passed since it was issued, so most
 * reads cost a decryption and nothing else (spec §2.15: `updateAge` is how often it is updated).
 *
 * @module
 */
import {
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
})
export type SessionPolicy = Infer<typeof SessionPolicy>

/** Context of the session machine. */
export const SessionContext = object({
  policy: nullable(SessionPolicy),
  request: enums(['none', 'read', 'update', 'signOut']),
  /** Data sent with POST /session, passed to the `jwt` callback. */
  data: optional(unknown()),
  callbackUrl: string(),
  /** Claims of the session token. */
  token: nullable(record(string(), unknown())),
  /** Epoch seconds at which the session expires, as reported to the client. */
  expires: number(),
  reissue: boolean(),
  /** The response body: the `session` callback's result. */
  session: unknown(),
  /** The newly encrypted token, when one was issued. */
  issued: nullable(string()),
})
export type SessionContext = Infer<typeof SessionContext>

type SessionRequest = Timestamped & { policy: SessionPolicy; callbackUrl?: string }

/** Events of the session machine. */
export type SessionEvent =
  | ({ type: 'session.read' } & SessionRequest)
  | ({ type: 'session.update'; data?: unknown } & SessionRequest)
  | ({ type: 'session.signOut'; callbackUrl: string } & SessionRequest)
  | EffectResult<'decodeSessionToken', { token: Record<string, unknown> }, 'missing' | 'invalid'>
  | EffectResult<'runJwtCallback', { token: Record<string, unknown> | null; changed: boolean }, 'threw'>
  | EffectResult<'runSessionCallback', { session: unknown }, 'threw'>
  | EffectResult<'encodeSessionToken', { value: string }, 'threw'>
  | EffectDone<'emitSessionEvent', null>
  | EffectDone<'emitSignOutEvent', null>

/** Tags: effect states and the resting state. */
export type SessionTag =
  | 'awaitsRequest'
  | 'effect.decodeSessionToken'
  | 'effect.runJwtCallback'
  | 'effect.runSessionCallback'
  | 'effect.encodeSessionToken'
  | 'effect.emitSessionEvent'
  | 'effect.emitSignOutEvent'

const initialContext: SessionContext = {
  policy: null,
  request: 'none',
  data: undefined,
  callbackUrl: '',
  token: null,
  expires: 0,
  reissue: false,
  session: null,
  issued: null,
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
  url: context.callbackUrl,
  session: { op: 'clear' },
})
const leftWithoutSession = ({ context }: { context: SessionContext }): FlowOutcome => ({
  type: 'redirect',
  url: context.callbackUrl,
})

const tokenExpiry = (token: Record<string, unknown> | null): number | undefined =>
  typeof token?.exp === 'number' ? token.exp : undefined
const tokenIssuedAt = (token: Record<string, unknown> | null): number =>
  typeof token?.iat === 'number' ? token.iat : 0

/** The session lifecycle machine. */
export const sessionMachine = setup({
  types: {} as { context: SessionContext; events: SessionEvent; tags: SessionTag },
  guards: {
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
    isReissueDue: ({ context, event }) => {
      assertEvent(event, 'runJwtCallback.done')
      return (
        context.request === 'update' ||
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
        'session.read': { target: 'decodingToken', actions: 'rememberRequest' },
        'session.update': { target: 'decodingToken', actions: 'rememberRequest' },
        'session.signOut': { target: 'decodingTokenToEnd', actions: 'rememberRequest' },
      },
    },
    decodingToken: {
      tags: 'effect.decodeSessionToken',
      description: 'Decrypts the session cookie and checks its expiry.',
      on: {
        'decodeSessionToken.done': { target: 'runningJwtCallback', actions: 'rememberToken' },
        'decodeSessionToken.failed': [
          { guard: 'isTokenMissing', target: 'noSession' },
          { target: 'invalidSession' },
        ],
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
      description: 'Fires `events.signOut` with the ended token.',
      on: { 'emitSignOutEvent.done': { target: 'signedOut' } },
    },
    signedOut: {
      type: 'final',
      description: 'Every session cookie chunk is cleared; redirect to the callback URL.',
      output: signedOut,
    },
    leftWithoutSession: {
      type: 'final',
      description: 'Sign-out without a session: redirect to the callback URL.',
      output: leftWithoutSession,
    },
  },
})
