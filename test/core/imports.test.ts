import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { importCircles, importGraph, type ImportEdge, type ImportGraph } from '../fixtures/import-graph.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const graph = importGraph(ROOT, ['core', 'machines'])

/**
 * The type modules: data shapes, provider and store types, the engine's and the resolved config's
 * types. They import only each other and machine types, so that naming a type never loads code
 * and never closes a circle through an implementation.
 */
const TYPE_MODULES = new Set([
  'core/types.ts',
  'core/shapes.ts',
  'core/symbols.ts',
  'core/modules.ts',
  'core/config/types.ts',
  'core/engine/types.ts',
  'core/engine/trace.ts',
  'core/oauth/types.ts',
  'core/email/types.ts',
  'core/store/types.ts',
  'core/flows/types.ts',
  'core/flows/webauthn/types.ts',
  'core/audit/types.ts',
  'core/telemetry/types.ts',
  'core/observe/types.ts',
  'core/observe/brand.ts',
  'core/api-keys/types.ts',
  'core/service-accounts/types.ts',
  'core/organizations/types.ts',
  'core/device-authorization/types.ts',
])

const edges = (file: string): readonly ImportEdge[] => graph.get(file) ?? []

describe('the import graph of core/ and machines/', () => {
  it('reads the tree it checks (the engine, the flows and every machine)', () => {
    expect(graph.size).toBeGreaterThan(80)
    expect(edges('core/auth.ts').length).toBeGreaterThan(0)
    expect([...graph.keys()].filter((file) => file.startsWith('machines/'))).toContain('machines/session.machine.ts')
  })

  it('has no import circle, type imports included', () => {
    expect(importCircles(graph).map((circle) => circle.join(' → '))).toEqual([])
  })

  it('gives machines nothing from core/: charts are pure and public', () => {
    const intoCore = [...graph]
      .filter(([file]) => file.startsWith('machines/'))
      .flatMap(([file, imports]) => imports.filter(({ to }) => to.startsWith('core/')).map(({ to }) => `${file} → ${to}`))
    expect(intoCore).toEqual([])
  })

  it('keeps the type modules leaves: they import only type modules and machine types', () => {
    for (const file of TYPE_MODULES) expect(graph.has(file), file).toBe(true)
    const intoImplementations = [...TYPE_MODULES].flatMap((file) =>
      edges(file)
        .filter(({ to, typeOnly }) => !TYPE_MODULES.has(to) && !(to.startsWith('machines/') && typeOnly))
        .map(({ to }) => `${file} → ${to}`),
    )
    expect(intoImplementations).toEqual([])
  })
})

describe('the circle finder', () => {
  const graphOf = (edges: Record<string, string[]>): ImportGraph =>
    new Map(Object.entries(edges).map(([file, to]) => [file, to.map((target) => ({ to: target, typeOnly: false }))]))

  it('names each circle by a path that closes on its first file', () => {
    const circles = importCircles(graphOf({ a: ['b'], b: ['c'], c: ['a', 'd'], d: [], e: ['e'] }))
    expect(circles.map((circle) => circle.join(' → ')).sort()).toEqual(['a → b → c → a', 'e → e'])
  })

  it('finds none in a graph without one', () => {
    expect(importCircles(graphOf({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([])
  })

  it('reads type-only and value imports apart', () => {
    const types = edges('core/types.ts')
    expect(types.length).toBeGreaterThan(0)
    expect(types.every((edge) => edge.typeOnly)).toBe(true)
    expect(edges('core/auth.ts').some((edge) => !edge.typeOnly)).toBe(true)
  })
})
