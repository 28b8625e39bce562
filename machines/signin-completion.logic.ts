/**
 * The sign-in completion chart's logic (see `shared/logic.ts`). The chart is
 * `signin-completion.machine.ts`.
 *
 * @module
 */

/** The id of the completion flow, the target of every first factor's handoff. */
export const SIGN_IN_COMPLETION = 'signin-completion'
