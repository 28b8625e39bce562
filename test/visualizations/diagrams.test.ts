/**
 * Diagrams are generated from the machines: the committed ones must match (so CI fails on drift),
 * the drift check must notice an edited machine, and every state, effect, guard and final state
 * must be visible.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createMachine, type AnyStateMachine } from 'xstate'
import { oauthSignInMachine } from '../../machines/index.js'
import { stateElementId } from '../../visualizations/dot.js'
import { OUT_DIR, staleDiagrams, writeDiagrams } from '../../visualizations/files.js'
import { builtInMachines, diagram } from '../../visualizations/flows.js'
import { flowGraph } from '../../visualizations/graph.js'

const scratch = mkdtempSync(join(tmpdir(), 'authchart-diagrams-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** The OAuth machine with one state's description edited, as a developer might. */
function editedOAuthMachine(): AnyStateMachine {
  const { config } = oauthSignInMachine
  const states = config.states as Record<string, object>
  return createMachine({
    ...config,
    states: { ...states, idle: { ...states.idle, description: 'Edited without regenerating.' } },
  } as never)
}

describe('generated diagrams', () => {
  it('are committed for every machine and match the machines (run `npm run diagrams` after editing one)', async () => {
    expect(await staleDiagrams(OUT_DIR)).toEqual([])
  })

  it('the drift check fails after a machine is edited without regenerating, and passes once regenerated', async () => {
    const dir = join(scratch, 'out')
    cpSync(OUT_DIR, dir, { recursive: true })
    const machines = builtInMachines.map((m) => (m.id === oauthSignInMachine.id ? editedOAuthMachine() : m))
    expect(await staleDiagrams(dir, machines)).toEqual(['oauth-signin.json', 'oauth-signin.mmd', 'oauth-signin.svg'])
    await writeDiagrams(dir, machines)
    expect(await staleDiagrams(dir, machines)).toEqual([])
  })

  it('reports a diagram left over from a removed machine', async () => {
    const dir = join(scratch, 'leftover')
    cpSync(OUT_DIR, dir, { recursive: true })
    const withoutOAuth = builtInMachines.filter((m) => m.id !== oauthSignInMachine.id)
    expect(await staleDiagrams(dir, withoutOAuth)).toEqual(['oauth-signin.json', 'oauth-signin.mmd', 'oauth-signin.svg'])
  })

  describe.each(builtInMachines.map((m) => [m.id, m] as const))('%s', (_id, machine) => {
    const graph = flowGraph(machine)

    it('shows every state in Mermaid, marking effects, guards and final states', async () => {
      const mermaid = await diagram(machine, 'mermaid')
      for (const state of graph.states) {
        // Mermaid ids have no dots: a state in a phase is `phase_state`, declared inside the phase.
        const id = state.id.replace(/[^A-Za-z0-9_]/g, '_')
        expect(mermaid).toContain(`state "${state.id}" as ${id}\n`)
        if (state.kind === 'group') expect(mermaid).toContain(`  state ${id} {`)
        else expect(mermaid).toContain(`  ${id} `)
        if (state.kind === 'effect') expect(mermaid).toContain(`  ${id} : effect ${state.effect}`)
        if (state.kind === 'final') expect(mermaid).toContain(`  ${id} --> [*]`)
      }
      for (const guard of new Set(graph.transitions.flatMap((t) => (t.guard ? [t.guard] : [])))) {
        expect(mermaid).toContain(`[${guard}]`)
      }
      expect(mermaid).toMatch(/^---\ntitle: .+\n---\nstateDiagram-v2\n/)
    })

    it('shows every state and transition in the SVG, finals double-bordered', async () => {
      // Graphviz writes '-' in attribute values as &#45;, which the browser decodes.
      const svg = (await diagram(machine, 'svg')).replace(/&#45;/g, '-')
      expect(svg).toContain('<svg')
      for (const state of graph.states) expect(svg).toContain(`id="${stateElementId(machine.id, state.id)}"`)
      for (const t of graph.transitions) expect(svg).toContain(`id="transition:${machine.id}:${t.id}"`)
      const finals = graph.states.filter((s) => s.kind === 'final').length
      // A double border is two outlines per final state.
      expect(svg.match(/<g id="state:[^"]+" class="node">\n<title>[^<]+<\/title>\n<path[^>]*>\n<path/g)?.length).toBe(finals)
    })
  })
})

describe('a chart grouped in phases', () => {
  const machine = createMachine({
    id: 'phased',
    initial: 'idle',
    states: {
      idle: { tags: 'awaitsRequest', on: { go: 'work' } },
      work: {
        description: 'The work phase.',
        initial: 'a',
        on: { abort: 'failed' },
        states: { a: { tags: 'effect.first', on: { 'first.done': 'b' } }, b: { on: { next: '#phased.done' } } },
      },
      done: { type: 'final' },
      failed: { type: 'final' },
    },
  })
  const graph = flowGraph(machine)

  it('marks the phase a group, its children with their parent, and where it is entered', () => {
    expect(graph.states.find((s) => s.id === 'work')).toMatchObject({ kind: 'group', entry: 'work.a' })
    expect(graph.states.find((s) => s.id === 'work.a')).toMatchObject({ kind: 'effect', parent: 'work', initial: true })
    expect(graph.states.find((s) => s.id === 'idle')!.parent).toBeUndefined()
  })

  it('nests the phase in Mermaid as a composite state, entered at its initial child', async () => {
    const mermaid = await diagram(machine, 'mermaid')
    expect(mermaid).toContain(
      [
        '  state "work" as work',
        '  state work {',
        '    [*] --> work_a',
        '    state "work.a" as work_a',
        '    work_a : effect first',
        '    state "work.b" as work_b',
        '  }',
      ].join('\n'),
    )
    expect(mermaid.match(/\[\*\] --> /g)?.length, 'the chart’s start and the phase’s').toBe(2)
    expect(mermaid).toContain('  work --> failed : abort')
  })

  it('draws the phase as a box around its children, and its transitions from its border', async () => {
    const svg = (await diagram(machine, 'svg')).replace(/&#45;/g, '-')
    expect(svg).toMatch(/<g id="state:phased:work" class="cluster">/)
    for (const state of graph.states) expect(svg).toContain(`id="${stateElementId(machine.id, state.id)}"`)
    for (const t of graph.transitions) expect(svg).toContain(`id="transition:${machine.id}:${t.id}"`)
    // One start arrow, to the chart's own initial state (not to the phase's initial child).
    expect(svg.match(/<title>phased:start&#45;&gt;|<title>phased:start-&gt;/g)?.length).toBe(1)
  })
})
