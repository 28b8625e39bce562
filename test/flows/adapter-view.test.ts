/**
 * A flow's effects are written against the view of the adapter methods the flow declares; the
 * engine hands them the request context, which is that view once its adapter is found to have
 * every method the configuration's flows declare (the same check `resolveConfig` makes at load).
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { RequestContext } from '../../core/config/types.js'
import { assertConfig } from '../../core/config/resolve-config.js'
import { sessionFlow } from '../../core/flows/session/flow.js'
import type { Adapter } from '../../core/shapes.js'
import { spyLogger, testConfig } from '../fixtures/http.js'

/** The least of a request context the view's check reads: the config and the adapter. */
const contextWith = (config: RequestContext['config'], adapter: Adapter | undefined) => ({ config, adapter }) as RequestContext

describe('the adapter view of a flow', () => {
  it('is refused for an adapter without a method the flows declare, naming it, before the effect runs', () => {
    const config = assertConfig(testConfig({ adapter: MemoryAdapter(createMemoryStore()), session: { strategy: 'database' } }))
    const { getSessionAndUser: _dropped, ...partial } = config.adapter!
    const run = () => sessionFlow.effects.getSessionAndUser!({} as never, contextWith(config, partial), { type: 'session.read' })
    expect(run).toThrow(new TypeError('The adapter lacks methods its flows declare: getSessionAndUser'))
  })

  it('runs the effects of a configuration that declares no method without an adapter (JWT sessions)', async () => {
    const config = assertConfig(testConfig())
    const ctx = { ...contextWith(config, undefined), at: 0, logger: spyLogger() } as unknown as RequestContext
    const answer = await sessionFlow.effects.decodeSessionToken!({ token: 'not-a-jwe' } as never, ctx, { type: 'session.read' })
    expect(answer.type).toMatch(/^decodeSessionToken\./)
  })
})
