/**
 * The refusal of an answer to a step whose sealed flow cannot be resumed, at the routing level:
 * the re-authentication reports it as `AccessDenied` (as its own refusals), and the other step
 * flows keep the flow-state error.
 */
import { describe, expect, it } from 'vitest'
import { AccessDenied, FlowStateError } from '../../core/errors.js'
import { reauthenticateModule } from '../../core/flows/reauthenticate/index.js'
import { routesOf } from '../../core/http/routes.js'
import type { RequestContext } from '../../core/http/context.js'
import type { FlowModule } from '../../core/flows/types.js'
import { spyLogger } from '../fixtures/http.js'
import { everyFlow } from '../../core/flows/catalogue.js'

/** Every route authchart ships: the built-in flows' and the optional features'. */
const routes = routesOf(everyFlow)

const stepAnswer = routes.find((r) => r.method === 'POST' && r.action === 'step')!.serve as { refused: (ctx: RequestContext, error: Error) => Promise<Error> | Error }

function contextFor(flowId: string, modules: FlowModule[]): RequestContext {
  return {
    flowId,
    request: { body: { event: 'reauth.password' }, cookies: {} },
    cookies: { flowState: { name: '__Secure-authchart.flow', options: {} } },
    config: { flowById: new Map(modules.map((m) => [m.id, m])) },
    logger: spyLogger(),
  } as unknown as RequestContext
}

describe('a refused answer to a step', () => {
  const spent = new FlowStateError('ERR_FLOW_STATE_INVALID', 'reauthenticate: envelope was already used')

  it('is AccessDenied for the re-authentication, logged without the flow', async () => {
    const ctx = contextFor('reauthenticate', [reauthenticateModule])
    const refused = await stepAnswer.refused(ctx, spent)
    expect(refused).toBeInstanceOf(AccessDenied)
    expect(ctx.logger.warn).toHaveBeenCalledWith('reauthentication-failed')
  })

  it('stays the flow-state error for a step flow that declares no refusal', async () => {
    const other = { ...reauthenticateModule, id: 'other', steps: { ...reauthenticateModule.steps!, refused: undefined } } as FlowModule
    expect(await stepAnswer.refused(contextFor('other', [other]), spent)).toBe(spent)
  })
})
