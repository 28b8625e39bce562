/**
 * Re-authentication (step-up) as one module: a signed-in user proves a factor again, and the
 * sensitive action that asked resumes. Its start by URL is an application's own step-up
 * (`requireRecentAuth`); the built-in sensitive actions start it from the freshness gate.
 *
 * @module
 */
import type { RequestContext } from '../../config/types.js'
import { route, StringParams } from '../../http/params.js'
import { reauthenticatePage } from '../../pages/reauthenticate.js'
import { FACTORS } from '../../session/verification.js'
import type { FlowModule } from '../types.js'
import { REAUTHENTICATE, reauthenticateFlow, refusedReauthentication } from './chart.js'
import { resumeTarget } from './gate.js'
import { reauthenticationPageData } from './page.js'

/** The factors a re-authentication asked for by URL accepts: the named ones, else any. */
function askedFactors(named: string | undefined): string[] {
  const asked = (named ?? '').split(/[\s,]+/).filter((factor) => (FACTORS as readonly string[]).includes(factor))
  return asked.length > 0 ? asked : [...FACTORS]
}

/** The re-authentication: run for every configuration (a signed-in user may be asked). */
export const reauthenticateModule: FlowModule = {
  id: REAUTHENTICATE,
  flow: reauthenticateFlow as unknown as FlowModule['flow'],
  runs: () => true,
  routes: [
    // An application's own sensitive route (requireRecentAuth) sends a stale session here: the
    // re-authentication starts, and the browser comes back to the callback URL after it.
    route({
      method: 'GET',
      action: 'reauthenticate',
      provider: 'none',
      callbackUrl: true,
      actsForUser: true,
      serve: {
        flow: reauthenticateFlow as unknown as FlowModule['flow'],
        params: StringParams,
        toEvent: (ctx: RequestContext, query: Record<string, string>) => {
          return {
            type: 'reauth.start',
            at: ctx.at,
            action: 'app',
            // The callback URL went through the `redirect` callback; the sign-in's rule keeps it here.
            intent: { method: 'GET', url: resumeTarget(ctx.callbackUrl, ctx.origin) ?? '/', fields: {} },
            policy: { maxAge: ctx.config.stepUp?.options.maxAge ?? 600, factors: askedFactors(query.factors) },
          }
        },
      },
    }),
  ],
  steps: {
    pages: { reauthenticate: reauthenticatePage },
    view: (ctx, context) => reauthenticationPageData(ctx, context as never),
    refused: refusedReauthentication,
  },
}
