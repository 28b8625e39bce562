/**
 * The page a re-authentication ends with: "Confirmed", and the form that resumes the action that
 * asked (posted again, or followed again), part of the step-up module.
 *
 * @module
 */
import type { Intent } from '../../../machines/reauthenticate.machine.js'
import type { RequestContext } from '../../config/types.js'
import { STEP_PAGE_HEADERS } from '../../http/steps.js'
import { resumeForm } from '../../pages/reauthenticate.js'
import { renderCardPage } from '../../pages/steps.js'
import type { ResponseInternal } from '../../types.js'
import { actionLabelOf } from './policy.js'

/** The "Confirmed" page, whose form resumes the sealed intent. */
export function respondResumePage(ctx: RequestContext, data: Record<string, unknown>): ResponseInternal {
  const intent = data.intent as Intent
  const label = actionLabelOf(String(data.action), intent.fields)
  const page = renderCardPage('Confirmed', ctx.config.theme, resumeForm(intent.url, intent.fields, ctx.csrf?.token ?? '', label))
  return { status: page.status, headers: STEP_PAGE_HEADERS, body: page.html, cookies: ctx.setCookies }
}
