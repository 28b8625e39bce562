/**
 * The TOTP enrolment as one module: a signed-in user turns on a second factor.
 *
 * @module
 */
import { TOTP_ENROLMENT } from '../../../machines/totp-enrolment.logic.js'
import type { TotpEnrolmentContext } from '../../../machines/totp-enrolment.logic.js'
import type { RequestContext } from '../../config/types.js'
import { AnyBody, isObjectBody, route } from '../../http/params.js'
import { respondTwoFactorPage, twoFactorAction } from './settings.js'
import { totpEnrolmentPage } from '../../pages/steps.js'
import type { FlowModule } from '../types.js'
import { enrolmentPageData, totpEnrolmentFlow } from './flow.js'

/** The TOTP enrolment: run where the adapter stores second factors. */
export const totpEnrolmentModule: FlowModule = {
  id: TOTP_ENROLMENT,
  flow: totpEnrolmentFlow as unknown as FlowModule['flow'],
  runs: (config) => typeof config.adapter?.listSecondFactors === 'function',
  routes: [
    route({ method: 'GET', action: 'two-factor', provider: 'none', csrfToken: true, actsForUser: true, serve: respondTwoFactorPage }),
    route({
      method: 'POST',
      action: 'two-factor',
      provider: 'none',
      csrf: true,
      callbackUrl: true,
      actsForUser: true,
      // Turning the second factor off, and new backup codes (a new way past it), are gated here;
      // turning it on, by the enrolment chart's own gate.
      stepUp: (ctx) =>
        ctx.request.body?.action === 'disable'
          ? 'remove-second-factor'
          : ctx.request.body?.action === 'regenerate-backup-codes'
            ? 'enrol-second-factor'
            : undefined,
      serve: {
        flow: totpEnrolmentFlow as unknown as FlowModule['flow'],
        params: AnyBody,
        accepts: isObjectBody,
        intercept: twoFactorAction,
        toEvent: (ctx: RequestContext) => ({ type: 'enrolment.start', at: ctx.at, callbackUrl: ctx.callbackUrl }),
      },
    }),
  ],
  steps: {
    pages: { 'totp-enrolment': totpEnrolmentPage },
    // The key is shown to the enrolling user only.
    view: (ctx, context) => enrolmentPageData(ctx, context as unknown as TotpEnrolmentContext),
  },
}
