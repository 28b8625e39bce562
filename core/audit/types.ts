/**
 * The audit event: one JSON record per request that advances a sign-in flow, and one per
 * lifecycle change (signing out, revoking sessions, adding a factor). Stable and versioned: a
 * field is only ever added, and a change of meaning raises {@link AUDIT_SCHEMA_VERSION}.
 *
 * An event never holds a token, code, password, secret, cookie, e-mail address or query string:
 * it names states, error types and ids, and the client's address as a keyed hash.
 *
 * @module
 */
import type { LifecycleChange } from '../observe/types.js'

/**
 * The version of {@link AuditEvent}'s shape, in every event's `v`. Version 2: a completed
 * re-authentication is a `reauthenticated` event (version 1 recorded it as a `flow` event whose
 * outcome was `signed-in`).
 */
export const AUDIT_SCHEMA_VERSION = 2

/** The versions an event may carry: a store keeps events written under earlier ones. */
export type AuditSchemaVersion = 1 | typeof AUDIT_SCHEMA_VERSION

/** The lifecycle changes recorded besides sign-in steps. */
export const LIFECYCLE_KINDS = [
  'sign-out',
  'sign-out-everywhere',
  'session-revoked',
  'second-factor-enrolled',
  'second-factor-removed',
  'passkey-added',
  'account-linked',
  'rate-limited',
  'reauthenticated',
  'api-key-created',
  'api-key-revoked',
  'api-key-rotated',
  'api-key-refused',
  'device-authorization-requested',
  'device-authorization-approved',
  'device-authorization-denied',
  'device-authorization-redeemed',
] as const satisfies readonly LifecycleChange[]

/** A lifecycle change's kind. */
export type LifecycleKind = (typeof LIFECYCLE_KINDS)[number]

/**
 * Every kind of audit event: a sign-in flow's step, or a lifecycle change. A completed
 * re-authentication (step-up: the signed-in user proved a factor again, the same session was marked
 * verified) is `reauthenticated`, with the flow's fields, the factor in `amr` and the `action`
 * that asked; it is no sign-in.
 */
export type AuditKind = 'flow' | LifecycleKind

/** How a request's flow run ended. */
export type AuditOutcome =
  /** A session was issued. */
  | { type: 'signed-in' }
  /** The same session was marked verified by a factor proven again (`reauthenticated` events). */
  | { type: 'reauthenticated' }
  /**
   * Refused: the error type the user was sent back with, and its `code`, the internal error code,
   * or the check that failed; `state` when the flow waits again for another try (a wrong code).
   */
  | { type: 'refused'; error: string; cause?: string; state?: string }
  /** The flow waits for another request in `state` (a code, a second factor, a redirect back). */
  | { type: 'step'; state: string }
  /** Ended without a session or a refusal (an answer, a redirect to a provider). */
  | { type: 'answered'; state: string }

/** Where the request came from, as much as may be kept. */
export interface AuditClient {
  /** `hmac:<base64url>` (keyed with the secret: equal for one address, not reversible), or the raw address when configured; absent when unknown. */
  address?: string
  /** The browser or tool family (`Chrome`, `Firefox`, `Safari`, `Edge`, `curl`, `other`); no version. */
  userAgent?: string
}

/** One audit record (schema version 2). */
export interface AuditEvent {
  /** {@link AUDIT_SCHEMA_VERSION} when written now; a store may hold events of version 1. */
  v: AuditSchemaVersion
  /** Random id of the event. */
  id: string
  /** ISO 8601 time of the request. */
  time: string
  /** The request's id: its `x-request-id` when it is a plain token, else a random UUID. */
  requestId: string
  kind: AuditKind
  /** The user, when the request knows them. */
  userId?: string
  /** The provider id of the sign-in. */
  provider?: string
  /**
   * How the user proved who they are (`pwd`, `otp`, `hwk`, ...), once a session is issued; for a
   * `reauthenticated` event, the factor proven again.
   */
  amr?: string[]
  /**
   * `reauthenticated` events: the action that asked for the proof and resumes (`add-passkey`,
   * `enrol-second-factor`, `remove-second-factor`, `revoke-sessions`, or `app` for an application's
   * own route guarded by `requireRecentAuth`).
   */
  action?: string
  /**
   * `api-key-*` events: the key's prefix (`<prefix>_<id>`, the public start of the key), never its
   * secret. `api-key-refused` names the key a request presented, if it parsed as one.
   */
  apiKey?: string
  client: AuditClient
  /** `flow` and `reauthenticated` events: the flows the request ran (a first factor, then the sign-in completion). */
  flow?: string
  /** `flow` and `reauthenticated` events: the chart version of `flow`. */
  chartVersion?: string
  /** `flow` and `reauthenticated` events: the states passed, in order, across the flows run (`flow:state`). */
  states?: string[]
  /** `flow` and `reauthenticated` events: how the request ended. */
  outcome?: AuditOutcome
}

/**
 * Receives every audit event. Called after the response is decided; a sink that throws is logged,
 * one that takes longer than the configured timeout is left to finish on its own.
 */
export type AuditSinkFunction = (event: AuditEvent) => void | Promise<void>

/** A sink that can also list a user's own events (for `GET {basePath}/audit`). */
export interface AuditStore {
  write(event: AuditEvent): void | Promise<void>
  /** The user's events, newest first. */
  listForUser(userId: string, options: { limit: number }): Promise<AuditEvent[]>
}

/** One sink: a function, the debug logger, or a store. */
export type AuditSink = AuditSinkFunction | 'logger' | AuditStore

/** The `audit.webhook` option (see `webhook.ts` and the webhook section of docs/guides/audit.md). */
export interface AuditWebhookOptions {
  /** Where events are POSTed as JSON (`https:` in production). */
  url: string
  /** The HMAC-SHA-256 key of the `authchart-signature` header; shared with the receiver only. */
  secret: string
  /** The kinds of event to send (`flow`, `sign-out`, ...); all by default. */
  events?: readonly AuditKind[] | undefined
  /** Attempts per event, the first included (default 5). */
  attempts?: number | undefined
  /** Milliseconds before the first retry, each next one 4 times longer (default 1000). */
  backoff?: number | undefined
  /** Milliseconds one attempt may take before it counts as failed (default 5000). */
  timeout?: number | undefined
}

/** The `audit` option. */
export interface AuditOptions {
  /** Where events go; several receive every event. Optional when a `webhook` is given. */
  sink?: AuditSink | AuditSink[] | undefined
  /** Signed webhook deliveries of selected events, queued without blocking the request. */
  webhook?: AuditWebhookOptions | undefined
  /** The client address in events: keyed hash (default), the raw address, or none. */
  clientAddress?: 'hmac' | 'raw' | 'none' | undefined
  /** Milliseconds a request waits for its sinks before leaving them to finish (default 50). */
  timeout?: number | undefined
}

/** The `audit` option after defaults. */
export interface ResolvedAudit {
  readonly sinks: readonly AuditSinkFunction[]
  /** The first sink that can list a user's events, for `GET {basePath}/audit`. */
  readonly store?: AuditStore
  readonly clientAddress: 'hmac' | 'raw' | 'none'
  readonly timeout: number
}
