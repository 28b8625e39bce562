/**
 * What the rest of the core knows of the re-authentication without the step-up module: its id,
 * and whether a provider's callback answers a re-authentication waiting in this browser (asked of
 * the module, when the configuration names one). The chart and its effects are `./chart.ts`,
 * reached through `authchart/step-up` only.
 *
 * @module
 */
import type { FlowBinding, RequestContext } from '../../config/types.js'

export { REAUTHENTICATE } from '../../../machines/shared/reauthenticate-names.js'

/**
 * The re-authentication waiting for this answer at the provider's registered callback, if any;
 * none without the step-up module (no re-authentication could have started).
 */
export async function waitingReauthentication(
  ctx: RequestContext,
  params: Record<string, string>,
): Promise<FlowBinding<Record<string, string>> | undefined> {
  return ctx.config.stepUp?.waiting(ctx, params)
}
