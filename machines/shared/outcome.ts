/**
 * What a flow at rest asks the HTTP layer to answer. Final states produce it as their `output`;
 * states that wait for another request name it in `meta.outcome`.
 *
 * @module
 */
import { nullable, number, object, optional, record, string, unknown, type Infer } from 'superstruct'
import type { ErrorType } from './errors.js'

/** A plain JSON object in a flow's context: a user, an account, a profile. */
export const Json = record(string(), unknown())

/**
 * Why a flow refused: the error type the user is shown and, for credentials, its `code` (and,
 * when a rate limit refused, the seconds until a retry may succeed).
 */
export const Denial = object({ error: string(), code: nullable(string()), retryAfter: optional(number()) })
export type Denial = Infer<typeof Denial>

/** A change to the session cookie. */
export type SessionCookieChange =
  | { op: 'set'; value: string; /** epoch seconds */ expires: number }
  | { op: 'clear' }

/**
 * A first factor's result: who was verified, handed to the sign-in completion, which alone decides
 * whether and how a session is issued. Plain JSON: it may be sealed while the completion waits.
 */
export interface VerifiedIdentity {
  /** The first factor's flow id; the completion stores the user the way that flow needs. */
  firstFactor: string
  providerId: string
  callbackUrl: string
  /** The user as the callbacks see it (a stored user when one was found). */
  user: Record<string, unknown>
  account: Record<string, unknown>
  /** The provider's profile (OAuth/OIDC), passed to the callbacks and events. */
  profile: Record<string, unknown> | null
  /** The stored user this identity is already linked to, when a lookup found one. */
  storedUser: Record<string, unknown> | null
  /** Whether the completion stores the user and account (create, link) before the session. */
  persist: boolean
  /** What the user submitted (credentials), for the `signIn` callback only; never sealed. */
  credentials: Record<string, unknown> | null
  /** Claims added to a new JWT before the `jwt` callback (provider tokens kept for refresh). */
  claims: Record<string, unknown> | null
  /**
   * A credential the first factor enrolled, which the user store saves once the user is stored
   * (a new passkey). Absent: none.
   */
  enrolment?: Record<string, unknown> | null
  /** Sign in even when the `signIn` callback returns a URL (Auth.js's passkeys). Absent: false. */
  ignoresSignInRedirect?: boolean
}

/** The answer of a flow. */
export type FlowResponse =
  | { type: 'json'; body: unknown; status?: number; cache?: 'no-store' }
  | { type: 'redirect'; url: string }
  | { type: 'error'; error: ErrorType; code?: string; /** seconds, when a rate limit refused */ retryAfter?: number }
  /** The request goes on in another flow: a first factor hands a verified identity on. */
  | { type: 'handoff'; flow: string; identity: VerifiedIdentity }
  /** The flow waits in a step: the browser is sent to the step's page (`GET /step/<flow>`). */
  | { type: 'step' }
  /**
   * A freshness gate found the signed-in user's proof too old for the sensitive `action`: the
   * request is sealed in a re-authentication, which resumes it after the proof.
   */
  | { type: 'stepUp'; action: string }
  /** A page rendered from `data` (plain JSON) by the page named `page`. */
  | { type: 'page'; page: string; data: Record<string, unknown>; status?: number }

/** A flow's answer and the session cookie change that goes with it. */
export type FlowOutcome = FlowResponse & { session?: SessionCookieChange }

/**
 * The machine-level `output` of every flow: xstate hands a machine the output of the final state it
 * reached on the done event; this passes it through as the machine's output.
 */
export const finalStateOutcome = ({ event }: { event: { output?: unknown } }): FlowOutcome =>
  event.output as FlowOutcome

/**
 * The refusal a failed effect reported: its error (the Configuration error when it names none), its
 * `code` and, from a rate limit, the seconds until a retry. Every chart's `recordDenial` keeps it.
 *
 * @throws {Error} for an event that is not an effect's failure (a chart wired to the wrong event).
 */
export function denialOf(event: { type: string; error?: ErrorType; code?: string; retryAfter?: number }): Denial {
  if (!event.type.endsWith('.failed')) throw new Error(`Expected an effect's failure, got "${event.type}"`)
  return {
    error: event.error ?? 'Configuration',
    code: event.code ?? null,
    ...(event.retryAfter !== undefined ? { retryAfter: event.retryAfter } : {}),
  }
}

/** A final state's output for a flow that refused: the error redirect (Configuration by default). */
export const toDenial = ({ context }: { context: { denial: Denial | null } }): FlowOutcome => ({
  type: 'error',
  error: (context.denial?.error ?? 'Configuration') as ErrorType,
  ...(context.denial?.code ? { code: context.denial.code } : {}),
  ...(context.denial?.retryAfter !== undefined ? { retryAfter: context.denial.retryAfter } : {}),
})
