/**
 * A deferred flow builds its chart when the engine first reads it, once: importing the built-in
 * flows (every cold start does) builds none of the charts a session read does not run.
 */
import { object, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { createMachine } from 'xstate'
import { defineFlow } from '../../core/engine/flow.js'
import { loadNotation } from '../../core/flows/loaded.js'
import { deferredFlow } from '../../core/flows/kinds.js'
import { credentialsSignInFlow } from '../../core/flows/credentials/flow.js'
import { reauthenticateFlow } from '../../core/flows/reauthenticate/chart.js'
import { signInCompletionFlow } from '../../core/flows/signin-completion/flow.js'
import { buildCredentialsSignIn, credentialsSignInMachine, CREDENTIALS_SIGN_IN } from '../../machines/credentials-signin.machine.js'
import { REAUTHENTICATE } from '../../machines/reauthenticate.machine.js'
import { SIGN_IN_COMPLETION } from '../../machines/signin-completion.machine.js'

function countedFlow() {
  let builds = 0
  const sealed = (context: unknown) => context
  const migrations = { '1': (state: unknown) => state }
  const flow = deferredFlow(() => {
    builds++
    return defineFlow({
      machine: createMachine({ id: 'counted', version: '2', initial: 'idle', states: { idle: {} } }),
      context: object({ name: string() }) as never,
      effects: {},
      sealed: sealed as never,
      migrations: migrations as never,
    })
  })
  return { flow, builds: () => builds, sealed, migrations }
}

describe('deferredFlow', () => {
  it('builds nothing until a part is read, then builds once for every part', () => {
    const { flow, builds, sealed, migrations } = countedFlow()
    expect(builds()).toBe(0)
    expect(flow.machine.id).toBe('counted')
    expect(builds()).toBe(1)
    expect(flow.machine).toBe(flow.machine)
    expect(Object.keys(flow.effects)).toEqual([])
    expect(flow.sealed).toBe(sealed)
    expect(flow.migrations).toEqual(migrations)
    expect(flow.context.schema).toHaveProperty('name')
    expect(builds()).toBe(1)
  })

  it('gives a copy its parts (a flow spread with another machine, as a chart upgrade test does)', () => {
    const { flow } = countedFlow()
    const copy = { ...flow, machine: credentialsSignInMachine }
    expect(copy.machine).toBe(credentialsSignInMachine)
    expect(copy.sealed).toBe(flow.sealed)
    expect(copy.migrations).toBe(flow.migrations)
  })

  it('holds the built-in credentials, sign-in completion and re-authentication charts under their ids', async () => {
    // The credentials chart is compiled at build time: its notation is loaded only to be read.
    expect(credentialsSignInFlow.chart.id).toBe(CREDENTIALS_SIGN_IN)
    await loadNotation(credentialsSignInFlow)
    expect(credentialsSignInFlow.machine.id).toBe(CREDENTIALS_SIGN_IN)
    expect(signInCompletionFlow.chart.id).toBe(SIGN_IN_COMPLETION)
    expect(reauthenticateFlow.chart.id).toBe(REAUTHENTICATE)
    await loadNotation(signInCompletionFlow)
    await loadNotation(reauthenticateFlow)
    expect(signInCompletionFlow.machine.id).toBe(SIGN_IN_COMPLETION)
    expect(reauthenticateFlow.machine.id).toBe(REAUTHENTICATE)
    // Built by the flow, from the same builder as the machine module's own export.
    expect(credentialsSignInFlow.machine.config).toEqual(buildCredentialsSignIn().config)
  })
})
