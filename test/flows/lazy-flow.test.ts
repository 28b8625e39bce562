/**
 * A flow of a module loaded on demand (OAuth, e-mail, WebAuthn) is read through `lazyFlow`: every
 * part the loaded definition declares must reach the engine through it. A part the shell drops is
 * dropped silently (a missing `migrations` restarts every flow in flight at the next deploy
 * instead of migrating it), so these tests read each part through both shells the engine uses.
 */
import { object, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { createMachine } from 'xstate'
import { defineFlow } from '../../core/engine/flow.js'
import { deferredFlow, lazyFlow, loadFlowModule, type FlowModules } from '../../core/flows/kinds.js'

/** A complete definition: every optional part set, `migrations` from two older chart versions. */
function completeDefinition() {
  return defineFlow({
    machine: createMachine({ id: 'loaded', version: '3', initial: 'idle', states: { idle: {} } }),
    context: object({ name: string() }) as never,
    effects: { noop: async () => ({ type: 'done' }) } as never,
    sealed: ((context: unknown) => context) as never,
    migrations: { '1': (state) => state, '2': (state) => state },
  })
}

const definition = completeDefinition()

/**
 * The WebAuthn module as this file's loader gives it: its flow is the complete definition. (The
 * loaded modules are per test file, so no other file sees this one.)
 */
const loaded = loadFlowModule('webauthn', async () => ({ webauthnSignInFlow: definition }) as unknown as FlowModules['webauthn'])

describe('lazyFlow', () => {
  it('exposes the migrations of the loaded definition, as the engine reads them on resume', async () => {
    await loaded
    const flow = lazyFlow('webauthn', (module) => module.webauthnSignInFlow)
    expect(flow.migrations).toBe(definition.migrations)
    expect(Object.keys(flow.migrations ?? {})).toEqual(['1', '2'])
  })

  it('keeps the migrations when the routing table spreads it into another definition', async () => {
    await loaded
    const flow = lazyFlow('webauthn', (module) => module.webauthnSignInFlow)
    expect({ ...flow }.migrations).toBe(definition.migrations)
  })

  it('reads nothing before the module is needed (no module, no error at import)', () => {
    expect(() => lazyFlow('oauth', (module) => module.oauthSignInFlow)).not.toThrow()
    expect(() => lazyFlow('oauth', (module) => module.oauthSignInFlow).machine).toThrow(/the oauth flow was not loaded/)
  })
})

describe.each([
  ['lazyFlow', () => lazyFlow('webauthn', (module) => module.webauthnSignInFlow)],
  ['deferredFlow', () => deferredFlow(() => definition)],
])('%s', (_name, shell) => {
  it('exposes every part the definition declares, each the definition\'s own', async () => {
    await loaded
    const flow = shell()
    const parts = Object.keys(definition)
    expect(parts).toEqual(expect.arrayContaining(['machine', 'context', 'effects', 'sealed', 'migrations']))
    for (const part of parts) expect([part, flow[part as keyof typeof flow]]).toEqual([part, definition[part as keyof typeof definition]])
    expect(Object.keys(flow).sort()).toEqual([...parts].sort())
  })
})
