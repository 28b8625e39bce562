/**
 * The event vocabulary shared by every flow: requests and effect results, each stamped with the
 * time (`at`, epoch seconds) by the HTTP layer. Time reaches a machine only through events, which
 * keeps machines deterministic and model-testable.
 *
 * @module
 */
import type { ErrorType } from './errors.js'

/** Every event carries the request time in epoch seconds. */
export interface Timestamped {
  at: number
}

/** An effect finished; its output is assigned by the chart. */
export type EffectDone<Name extends string, Output> = {
  type: `${Name}.done`
  output: Output
} & Timestamped

/**
 * An effect failed in an expected way. `reason` is what the chart branches on; `error` and `code`
 * say what the user is told (an error type of spec §7, and for credentials a `code`).
 */
export type EffectFailed<Name extends string, Reason extends string = string> = {
  type: `${Name}.failed`
  reason: Reason
  error?: ErrorType
  code?: string
  /** Seconds until a rate limit lets the attempt through again (a limited attempt only). */
  retryAfter?: number
} & Timestamped

/** The two results of an effect. */
export type EffectResult<Name extends string, Output, Reason extends string = string> =
  | EffectDone<Name, Output>
  | EffectFailed<Name, Reason>

/** The tag that marks a state as waiting for the next HTTP request. */
export const AWAITS_REQUEST = 'awaitsRequest'

/** The prefix of tags that mark effect states: `effect.<name>`. */
export const EFFECT_TAG_PREFIX = 'effect.'
