/**
 * The request shapes routes share: any object body, no input, a string query. A flow module's
 * routes use them, so a request is read the same way whichever flow it starts.
 *
 * @module
 */
import { define, optional, record, string, unknown } from 'superstruct'
import type { FlowBinding, Handler, Route } from './types.js'

/** One entry of the routing table, its binding's params typed. */
export const route = <P>(entry: Omit<Route, 'serve'> & { serve: FlowBinding<P> | Handler }): Route => entry as Route

/** Whether a body is a JSON object (not an array, not null). */
export const isObjectBody = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Any object body (the credentials are the application's to check); no per-field walk. */
export const AnyBody = define<Record<string, unknown>>('AnyBody', isObjectBody)
/** No input read. */
export const NoInput = optional(unknown())
/** What {@link NoInput} accepts: anything (so superstruct need not walk the query). */
export const anyInput = (_input: unknown): _input is unknown => true
/** A query or form of strings. */
export const StringParams = record(string(), string())

/** The body carries a one-time `code` (it resumes a flow waiting for one). */
export const hasCode = (_ctx: unknown, body: Record<string, unknown>): boolean => typeof body.code === 'string'
