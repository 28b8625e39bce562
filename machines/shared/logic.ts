/**
 * What a chart's logic module is written with. A chart is two files: `<name>.machine.ts`, the
 * xstate notation (diagrams, model-based tests, the inspector, extended charts), and
 * `<name>.logic.ts`, everything the chart computes (its id, context, guards, assignments, outputs),
 * in plain functions that import neither xstate nor a `.machine.ts` file. The engine runs the
 * chart compiled at build time from the notation, and the compiled chart references the logic
 * module's functions: a request never loads xstate.
 *
 * The convention the chart compiler reads:
 * - `guards`: an object of named guards, `({ context, event }) => boolean`;
 * - `assignments`: an object of named assignments, `({ context, event }) => Partial<Context>`
 *   (xstate's `assign` with the function form; a property map is written as a function);
 * - an assignment of a chart its machine file builds with parameters may take the action's
 *   `params` as a second argument ({@link ParameterisedAssignment}): the chart names it as
 *   `{ type: 'x', params: { … } }`, and it is called as xstate calls it, `(args, params)`;
 * - `outputs`: an object of every other function the chart uses (a final state's `output`, the
 *   machine's `output`, a waiting state's `meta.outcome`).
 *
 * The machine file uses them by name (`guards`, `actions: { x: assign(assignments.x) }`, `output:
 * outputs.y`); the compiler finds each function of the chart among these three objects by identity
 * and refuses a chart that uses a function it cannot name.
 *
 * @module
 */

/** A named guard of a chart's logic module. */
export type Guard<Context, Event> = (args: { context: Context; event: Event }) => boolean

/** A named assignment of a chart's logic module: the fields it writes. */
export type Assignment<Context, Event> = (args: { context: Context; event: Event }) => Partial<Context>

/**
 * A named assignment that reads the action's `params` (`{ type, params }` in the chart), for a
 * chart built with parameters (one transition per extension step, say).
 */
export type ParameterisedAssignment<Context, Event, Params> = (
  args: { context: Context; event: Event },
  params: Params,
) => Partial<Context>

/**
 * Narrows `event` to the given type(s), as xstate's `assertEvent` does, without loading xstate on
 * the request path.
 *
 * @throws {Error} when the event is of another type. The message names the types only, never the
 *   event's payload (it may carry credentials or tokens).
 */
export function expectEvent<TEvent extends { type: string }, TType extends TEvent['type']>(
  event: TEvent,
  type: TType | readonly TType[],
): asserts event is TEvent & { type: TType } {
  const types: readonly string[] = typeof type === 'string' ? [type] : type
  if (!types.includes(event.type)) {
    throw new Error(`Expected an event of type ${types.map((name) => JSON.stringify(name)).join(' or ')}, got ${JSON.stringify(event.type)}`)
  }
}
