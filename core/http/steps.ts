/**
 * Steps: a flow that waits for the user (a second-factor code, an application's terms page, the
 * confirmation of a new authenticator app) is shown at `GET {basePath}/step/<flow>` and answered at
 * `POST {basePath}/step/<flow>`. The page is rendered from the sealed flow, read without being
 * spent; the answer is checked (CSRF by the route, then the fields against the events the waiting
 * state declares) before it reaches the flow.
 *
 * @module
 */
import { validate, type Struct } from 'superstruct'
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate'
import { flowModule } from '../flows/kinds.js'
import { openEnvelope } from '../engine/envelope.js'
import type { FlowDefinition } from '../engine/flow.js'
import { RequestError } from '../errors.js'
import type { StepPage, StepView } from '../extensions.js'
import type { FlowModule } from '../flows/types.js'
import { renderCardPage } from '../pages/steps.js'
import type { ResponseInternal } from '../types.js'
import type { RequestContext } from './context.js'
import { NO_STORE_HEADERS } from './handlers.js'
import { flowCookieName, sealingFor } from './resting.js'

/** A waiting state's declaration of its step: the page it shows and the events it takes. */
interface StepDeclaration {
  page: string
  events: Record<string, Struct<Record<string, unknown>, unknown>>
}

/** The flow of `flowId` if its waiting states are steps (its module declares their pages). */
function stepModuleOf(ctx: RequestContext, flowId = ctx.flowId): FlowModule {
  // Stryker disable next-line ConditionalExpression: eq#steps-no-flow-id
  const module = flowId === undefined ? undefined : ctx.config.flowById.get(flowId)
  if (!module?.steps) throw new RequestError(`No step of a flow "${String(flowId)}"`, 404)
  return module
}

/** The flows whose waiting states are steps, by id. */
export function stepFlowOf(ctx: RequestContext, flowId = ctx.flowId): FlowDefinition<AnyStateMachine, RequestContext> {
  return stepModuleOf(ctx, flowId).flow
}

/** The error a refused answer to a step is reported as: the flow's own, else the flow-state error. */
export function refusedStep(ctx: RequestContext, error: Error): Error | Promise<Error> {
  return stepModuleOf(ctx).steps!.refused?.(ctx, error) ?? error
}

/** The step a resting snapshot waits in. */
function stepOf(snapshot: AnyMachineSnapshot): StepDeclaration {
  for (const meta of Object.values(snapshot.getMeta()) as { step?: StepDeclaration }[]) {
    if (meta?.step) return meta.step
  }
  throw new RequestError('The flow is not waiting for an answer')
}

/**
 * The request event answering a step: the event the body names (or the step's only one), with
 * the fields its struct accepts and nothing else.
 *
 * @throws {RequestError} for an event the step does not take or fields that do not fit.
 */
export function stepEvent(ctx: RequestContext, snapshot: AnyMachineSnapshot): { type: string; at: number } {
  const step = stepOf(snapshot)
  const { csrfToken: _csrf, event: named, ...fields } = ctx.request.body ?? {}
  const names = Object.keys(step.events)
  const type = typeof named === 'string' ? named : names.length === 1 ? names[0] : undefined
  if (type === undefined || !Object.hasOwn(step.events, type)) throw new RequestError('Unknown step event')
  const [invalid, input] = validate(fields, step.events[type]!, { coerce: true, mask: true })
  if (invalid) throw new RequestError(`Invalid input at ${invalid.path.join('.') || 'body'}`)
  return { ...input, type, at: ctx.at }
}

/** The page `name` of a flow's step: the flow's own, else an extension's. */
function pageOf(ctx: RequestContext, module: FlowModule, name: string): StepPage {
  const page = module.steps!.pages[name] ?? ctx.config.extensions.find((e) => e.pages?.[name])?.pages?.[name]
  // Stryker disable next-line ConditionalExpression,StringLiteral: eq#steps-page-unrendered
  if (!page) throw new TypeError(`no page renders the step "${name}"`)
  return page
}

/**
 * Headers of every step page: never cached; never framed either (the form must not be
 * clickjacked), by the page policy every HTML answer gets in `http/answer.ts`.
 */
export const STEP_PAGE_HEADERS = {
  'Content-Type': 'text/html',
  ...NO_STORE_HEADERS,
} as const

const signInAgain = (ctx: RequestContext): ResponseInternal => ({
  redirect: `${ctx.authUrl}/signin`,
  cookies: ctx.setCookies,
})

/** `GET /step/<flow>`: the page of the step the flow waits in; sign in again when there is none. */
export async function respondStepPage(ctx: RequestContext): Promise<ResponseInternal> {
  const module = stepModuleOf(ctx)
  const { flow } = module
  const flowId = flow.chart.id
  const cookieName = flowCookieName(ctx, flowId)
  const sealed = ctx.request.cookies[cookieName]
  if (!sealed) return signInAgain(ctx)
  let snapshot: AnyMachineSnapshot
  try {
    // Read, not spent: showing the page changes nothing.
    snapshot = await openEnvelope(flow as never, sealed, { ...sealingFor(ctx, cookieName, undefined), peek: true })
  } catch (error) {
    ctx.logger.debug('step page for an unusable flow', { flow: flowId, reason: (error as Error).message })
    return signInAgain(ctx)
  }
  const context = snapshot.context as Record<string, unknown>
  // What the flow's pages may show of its context; `null` when the page is not the requester's to see.
  const data = await module.steps!.view(ctx, context)
  if (!data) return signInAgain(ctx)
  const user = context.user as StepView['user'] | undefined
  const view: StepView = {
    action: `${ctx.authUrl}/step/${flowId}`,
    csrfToken: ctx.csrf!.token,
    error: typeof context.stepError === 'string' ? context.stepError : null,
    user: user ? { name: user.name ?? null, email: user.email ?? null, image: user.image ?? null } : null,
    data,
    theme: ctx.config.theme,
  }
  const { title, html } = pageOf(ctx, module, stepOf(snapshot).page)(view)
  const page = renderCardPage(title, ctx.config.theme, html)
  return { status: page.status, headers: STEP_PAGE_HEADERS, body: page.html, cookies: ctx.setCookies }
}

/** A page a flow ended with (the backup codes of a new second factor, the front-channel logout's). */
export function respondOutcomePage(
  ctx: RequestContext,
  name: string,
  data: Record<string, unknown>,
  status?: number,
): ResponseInternal {
  // The logout flow comes with the OAuth flow, and its page (which the provider frames) with it:
  // named here as the logout chart names it, so that a credentials-only app carries no logout chart.
  if (name === 'frontchannel-logout') return flowModule('oauth').respondFrontChannelPage(ctx, data, status)
  // The other outcome pages come with the feature that ends with them: the backup codes with the
  // second factor, the "Confirmed" page that resumes an action with step-up.
  const page = ctx.config.secondFactor?.outcomePages[name] ?? ctx.config.stepUp?.outcomePages[name]
  // Stryker disable next-line ConditionalExpression: eq#steps-outcome-page-unknown
  if (!page) throw new TypeError(`no page "${name}"`)
  return page(ctx, data)
}
