/**
 * The flow modules of the mutation groups load, each with an implementation of every effect its
 * chart names. Imported inside the tests, not at the top: a module that throws while loading fails
 * the test that imports it here, where a file importing it at the top fails to load, which the
 * mutation runner does not count as a failed test.
 */
import { describe, expect, it } from 'vitest'

/** The effects a chart names: the `effect.<name>` tags of its states. */
function effectNamesOf(machine: { root: unknown }): string[] {
  const names = new Set<string>()
  const walk = (node: { tags: Set<string>; states: Record<string, unknown> }) => {
    for (const tag of node.tags) if (tag.startsWith('effect.')) names.add(tag.slice('effect.'.length))
    for (const child of Object.values(node.states)) walk(child as typeof node)
  }
  walk(machine.root as never)
  return [...names].sort()
}

describe('the flow modules load', () => {
  it('the TOTP enrolment: its chart and an implementation of each effect it names', async () => {
    const { totpEnrolmentEffects, totpEnrolmentFlow } = await import('../../core/flows/totp-enrolment/flow.js')
    const { totpEnrolmentMachine } = await import('../../machines/totp-enrolment.machine.js')
    const names = effectNamesOf(totpEnrolmentMachine)
    expect(names).toEqual(['checkFreshness', 'confirmTotp', 'createTotpSecret'])
    expect(Object.keys(totpEnrolmentEffects).sort()).toEqual(names)
    // The flow runs its compiled table; its notation, once loaded, is the machine module's own.
    const { totpEnrolmentChart } = await import('../../core/charts/totp-enrolment.js')
    expect(totpEnrolmentFlow.chart).toBe(totpEnrolmentChart)
    const { loadNotation } = await import('../../core/flows/loaded.js')
    await loadNotation(totpEnrolmentFlow)
    expect(totpEnrolmentFlow.machine).toBe(totpEnrolmentMachine)
    expect(Object.keys(totpEnrolmentFlow.effects).sort()).toEqual(names)
  })
})
