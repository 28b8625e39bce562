/**
 * Traces of flow runs, for the `inspect` hook: which states a request moved through and which
 * transitions it took. A trace never holds event payloads or context, so it cannot leak secrets.
 *
 * @module
 */

/** One transition taken. */
export interface TraceStep {
  /** The event type (never its payload). */
  event: string
  /** State value before and after, as dotted paths (`a.b`). */
  from: string
  to: string
  /** Ids of the transition definitions taken (`<source state id>:<event>:<index>`). */
  readonly transitions: readonly string[]
}

/** A flow run: one HTTP request's worth of transitions. */
export interface FlowTrace {
  flow: string
  version: string
  /** Epoch seconds of the request. */
  at: number
  /** Whether the run resumed a sealed flow rather than starting a new one. */
  resumed: boolean
  steps: TraceStep[]
  /** `done` for a final state, `resting` for a state awaiting a request, `error` otherwise. */
  status: 'done' | 'resting' | 'error'
  /** The response kind the run produced, e.g. `json`, `redirect`, `error:CredentialsSignin`. */
  outcome?: string
  /** The internal error code when the run failed. */
  errorCode?: string
}
