/**
 * A configuration with extensions served before the extended completion's composer is loaded (an
 * application's first request: this file imports nothing that loads it). The handler loads it
 * and composes the chart before answering, so an unsafe extension still fails the configuration,
 * on every request, and a safe one runs; a configuration without extensions never loads it.
 */
import { describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import { CONTINUE } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { canComposeExtended } from '../../core/flows/signin-completion/flow.js'
import { authRequest, Client, spyLogger, testConfig } from '../fixtures/http.js'

const safe = defineExtension({
  id: 'check',
  version: '1',
  at: 'beforeSession',
  initial: 'checking',
  states: { checking: { tags: 'effect.check', on: { 'check.done': CONTINUE } } },
  effects: { check: async (_context, ctx) => ({ type: 'check.done', output: null, at: ctx.at }) },
})

const unsafe = defineExtension({
  id: 'skip',
  version: '1',
  at: 'beforeSession',
  initial: 'checking',
  // Typed away (a core state is no target of an extension's): the check at load is what is tested.
  states: { checking: { tags: 'effect.check', on: { 'check.done': 'issuingSession' as never } } },
  effects: { check: async (_context, ctx) => ({ type: 'check.done', output: null, at: ctx.at }) },
})

describe('the extended completion, composed on first request', () => {
  it('is not loaded by a configuration without extensions', async () => {
    const response = await Auth(authRequest({ path: '/auth/providers' }), testConfig())
    expect(response.status).toBe(200)
    expect(canComposeExtended()).toBe(false)
  })

  it('refuses an unsafe extension on every request, as a configuration error', async () => {
    const config = testConfig({ logger: spyLogger(), extensions: [unsafe] })
    for (let i = 0; i < 2; i++) {
      const response = await Auth(authRequest({ path: '/auth/session' }), config)
      expect(response.status).toBe(500)
      expect(config.logger.error.mock.calls[i]![0].message).toMatch(/^config\.extensions: .*targets "issuingSession"/)
    }
  })

  it('runs a safe extension in the sign-in it extends', async () => {
    const client = new Client(testConfig({ extensions: [safe] }))
    const response = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(response.status).toBe(302)
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })
})
