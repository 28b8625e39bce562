/**
 * What a flow at rest asks the HTTP layer to answer. Final states produce it as their `output`;
 * states that wait for another request name it in `meta.outcome`.
 *
 * @module
 */
import type { ErrorType } from '../../core/errors.js'

/** A change to the session cookie. */
export type SessionCookieChange =
  | { op: 'set'; value: string; /** epoch seconds */ expires: number }
  | { op: 'clear' }

/** The answer of a flow. */
export type FlowResponse =
  | { type: 'json'; body: unknown; status?: number; cache?: 'no-store' }
  | { type: 'redirect'; url: string }
  | { type: 'error'; error: ErrorType; code?: string }

/** A flow's answer and the session cookie change that goes with it. */
export type FlowOutcome = FlowResponse & { session?: SessionCookieChange }

/**
 * The machine-level `output` of every flow: xstate hands a machine the output of the final state it
 * reached on the done event; this passes it through as the machine's output.
 */
export const finalStateOutcome = ({ event }: { event: { output?: unknown } }): FlowOutcome =>
  event.output as FlowOutcome
