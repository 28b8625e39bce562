/**
 * The Mermaid diagrams read by the real Mermaid (its browser bundle from node_modules, injected
 * into headless Chromium: no CDN): each committed `.mmd` parses, every state of the machine is a
 * state of the parsed chart titled with its own name, and the rendered chart shows each state's
 * name as its title with its kind and description intact underneath, and every transition label.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OUT_DIR } from '../../visualizations/files.js'
import { builtInMachines } from '../../visualizations/flows.js'
import { flowGraph, type GraphState } from '../../visualizations/graph.js'
import { toMermaid } from '../../visualizations/mermaid.js'
import { launchChromium } from '../fixtures/chromium.js'

const MERMAID_BUNDLE = createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js')

let browser: Browser
let page: Page

beforeAll(async () => {
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } })
  await page.setContent('<!doctype html><html><body></body></html>')
  await page.addScriptTag({ path: MERMAID_BUNDLE })
  await page.evaluate(() => {
    ;(globalThis as unknown as { mermaid: { initialize(o: object): void } }).mermaid.initialize({
      startOnLoad: false,
      securityLevel: 'strict',
    })
  })
})
afterAll(() => browser?.close())

interface Parsed {
  /** Parsed states: id → descriptions (the first is the title). */
  states: Record<string, string[]>
  /** Rendered state nodes: id → [title, body lines]. */
  nodes: Record<string, { title: string; body: string[] }>
  /** Rendered composite states (phases): id → title. */
  composites: Record<string, string>
  edgeLabels: string[]
}

/** Parses and renders `text` with Mermaid in the page. */
async function readWithMermaid(text: string): Promise<Parsed> {
  return page.evaluate(async (source) => {
    type Mermaid = {
      parse(text: string): Promise<unknown>
      render(id: string, text: string): Promise<{ svg: string }>
      mermaidAPI: { getDiagramFromText(text: string): Promise<{ db: { getStates(): Map<string, { descriptions: string[] }> } }> }
    }
    const mermaid = (globalThis as unknown as { mermaid: Mermaid }).mermaid
    await mermaid.parse(source)
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(source)
    const states: Record<string, string[]> = {}
    for (const [id, state] of diagram.db.getStates()) states[id] = state.descriptions
    const { svg } = await mermaid.render('chart', source)
    const host = document.createElement('div')
    host.innerHTML = svg
    document.body.replaceChildren(host)
    const nodes: Record<string, { title: string; body: string[] }> = {}
    for (const node of host.querySelectorAll('g.node')) {
      const id = /^chart-state-(.+)-\d+$/.exec(node.id)?.[1]
      const [title, body] = [...node.querySelectorAll('foreignObject > div')].map((div) => (div as HTMLElement).innerText)
      if (id) nodes[id] = { title: title ?? '', body: (body ?? '').split('\n') }
    }
    const composites: Record<string, string> = {}
    for (const cluster of host.querySelectorAll('g.statediagram-cluster')) {
      const id = /^chart-state-(.+)-\d+$/.exec(cluster.id)?.[1]
      if (id) composites[id] = (cluster.textContent ?? '').trim()
    }
    const edgeLabels = [...host.querySelectorAll('.edgeLabel foreignObject > div')]
      .map((div) => (div as HTMLElement).innerText.trim())
      .filter(Boolean)
    return { states, nodes, composites, edgeLabels }
  }, text)
}

const idOf = (state: GraphState) => state.id.replace(/[^A-Za-z0-9_]/g, '_')
const bodyOf = (state: GraphState) =>
  [
    state.kind === 'effect' ? `effect ${state.effect}` : state.kind === 'resting' ? 'awaits a request' : state.kind === 'final' ? 'final' : undefined,
    state.description,
  ].filter((line): line is string => line !== undefined)

describe('Mermaid diagrams read by Mermaid', () => {
  it.each(builtInMachines.map((m) => [m.id, m] as const))('%s.mmd: every state is named by its title, its text intact', async (id, machine) => {
    const graph = flowGraph(machine)
    const { states, nodes, composites, edgeLabels } = await readWithMermaid(readFileSync(join(OUT_DIR, `${id}.mmd`), 'utf8'))
    for (const state of graph.states) {
      if (state.kind === 'group') {
        // A phase is a composite state around its children, titled with its name.
        expect(states[idOf(state)]?.[0], `parsed title of ${state.id}`).toBe(state.id)
        expect(composites[idOf(state)], `rendered phase ${state.id}`).toBe(state.id)
        continue
      }
      // Mermaid parses a composite state's children into a document of their own: their titles
      // are checked where they are drawn.
      if (state.parent === undefined) expect(states[idOf(state)]?.[0], `parsed title of ${state.id}`).toBe(state.id)
      expect(nodes[idOf(state)], `rendered ${state.id}`).toEqual({ title: state.id, body: bodyOf(state) })
    }
    expect(Object.values(nodes).filter((n) => n.title === 'final')).toEqual([])
    const labels = graph.transitions.map((t) => `${t.event}${t.guard ? ` [${t.guard}]` : ''}`)
    expect(edgeLabels.sort()).toEqual(labels.sort())
  })

  it('keeps punctuation Mermaid reserves (: ; # " < > & { } `) in titles, descriptions and labels', async () => {
    const tricky = 'Waits: "a" ; #1 <b> & {c} `d` /callback/:provider'
    const { states, nodes, edgeLabels } = await readWithMermaid(
      toMermaid({
        id: 'tricky',
        version: '1',
        states: [
          { id: 'first', kind: 'resting', description: tricky, initial: true },
          { id: 'second', kind: 'final', initial: false },
        ],
        transitions: [{ id: 't', source: 'first', target: 'second', event: 'go:now;', guard: 'is#ok', actions: [] }],
      }),
    )
    expect(states.first?.[0]).toBe('first')
    expect(nodes.first).toEqual({ title: 'first', body: ['awaits a request', tricky] })
    expect(nodes.second).toEqual({ title: 'second', body: ['final'] })
    expect(edgeLabels).toEqual(['go:now; [is#ok]'])
  })
})
