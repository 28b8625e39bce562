/**
 * Compiles the charts at build time: each `machines/<name>.machine.ts` whose chart has a logic
 * module (`<name>.logic.ts` exporting `guards`, `assignments` and `outputs`, see
 * `machines/shared/logic.ts`) becomes `core/charts/<chart id>.ts`, a plain table of its states that
 * imports only the logic module and references its functions by name. The engine steps that table;
 * a request never loads xstate.
 *
 * A chart that uses a function its logic module does not name, or a feature beyond the compiled
 * subset, is refused (exit 1) with the chart, the state and the function.
 *
 * `npm run charts` writes the tables; `npm run charts:check` (run by `npm run build` and the test
 * suite) fails when a committed table differs from what this script writes.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { AnyStateMachine } from 'xstate'
import { chartOf, ChartCompileError } from '../core/engine/runtime-compiler.js'
import { transitionId, valueOfKey } from '../core/engine/table.js'
import type { ChartState, ChartTransition, CompiledChart } from '../core/engine/types.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
/** Where the generated tables live. */
export const CHARTS_DIR = join(ROOT, 'core', 'charts')
const MACHINES_DIR = join(ROOT, 'machines')

/** A chart's logic module, as imported. */
export type LogicModule = Readonly<Record<string, unknown>>

/** The function groups of a logic module the compiler names functions from, by role. */
const GROUPS = { guard: 'guards', assignment: 'assignments', output: 'outputs' } as const
type Role = keyof typeof GROUPS

/** Whether `module` follows the logic-module convention (the chart has been split). */
export function isLogicModule(module: LogicModule): boolean {
  return Object.values(GROUPS).every((group) => typeof module[group] === 'object' && module[group] !== null)
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
/** A string literal in the repository's style (single quotes). */
const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`
const property = (key: string) => (IDENTIFIER.test(key) ? key : quote(key))
/** A state value or a list of names as source. */
const literal = (value: unknown): string =>
  typeof value === 'string'
    ? quote(value)
    : Array.isArray(value)
      ? `[${value.map(literal).join(', ')}]`
      : `{ ${Object.entries(value as Record<string, unknown>).map(([key, child]) => `${property(key)}: ${literal(child)}`).join(', ')} }`
const describeFunction = (fn: unknown) =>
  typeof fn === 'function' && fn.name ? `"${fn.name}"` : `an unnamed function (${String(fn).replace(/\s+/g, ' ').slice(0, 60)})`

/**
 * The source of `core/charts/<chart id>.ts` for `machine`, whose logic module is `logic`, imported
 * as `../../machines/<logicName>.logic.js`.
 *
 * @throws {ChartCompileError} when the chart is beyond the subset or uses a function `logic` does not name.
 */
export function generateChart(machine: AnyStateMachine, logic: LogicModule, logicName: string): string {
  const chart = chartOf(machine)
  const logicFile = `machines/${logicName}.logic.ts`
  const names = new Map<Role, Map<unknown, string>>()
  for (const [role, group] of Object.entries(GROUPS) as [Role, string][]) {
    const byFunction = new Map<unknown, string>()
    for (const [name, fn] of Object.entries((logic[group] ?? {}) as Record<string, unknown>)) {
      if (!byFunction.has(fn)) byFunction.set(fn, IDENTIFIER.test(name) ? `${group}.${name}` : `${group}[${quote(name)}]`)
    }
    names.set(role, byFunction)
  }
  const used = new Set<string>()
  const nameOf = (role: Role, fn: unknown, state: string | undefined, where: string): string => {
    const name = names.get(role)!.get(fn)
    if (name === undefined) {
      throw new ChartCompileError(
        chart.id,
        state,
        `${where} uses ${describeFunction(fn)}, which is not among the ${GROUPS[role]} ${logicFile} exports (write it there and use it by name)`,
      )
    }
    used.add(GROUPS[role])
    return name
  }
  /** A value the module exports (the context, a step), by identity. */
  const exportOf = (value: unknown, state: string | undefined, what: string): string => {
    const found = Object.entries(logic).find(([, exported]) => exported === value)?.[0]
    if (found === undefined) {
      throw new ChartCompileError(chart.id, state, `${what} is not exported by ${logicFile} (export it and use it there)`)
    }
    used.add(found)
    return found
  }

  const transition = (state: ChartState, event: string, candidate: ChartTransition, index: number) => {
    const where = `the transition on "${event}" (candidate ${index})`
    const parts: string[] = []
    // The id is derived at load (`transitionId`); written only where xstate's differs.
    if (candidate.id !== transitionId(chart.id, state.key, event, index)) parts.push(`id: ${literal(candidate.id)}`)
    if (candidate.guard) parts.push(`guard: ${nameOf('guard', candidate.guard, state.key, `the guard of ${where}`)}`)
    const assignments = candidate.assignments.map((fn, i) => nameOf('assignment', fn, state.key, `assignment ${i} of ${where}`))
    if (assignments.length > 0) parts.push(`assignments: [${assignments.join(', ')}]`)
    if (candidate.target !== undefined) parts.push(`target: ${literal(candidate.target)}`)
    return `{ ${parts.join(', ')} }`
  }
  const stateSource = (state: ChartState) => {
    // The key is the property name, and the value follows from it (`valueOfKey`) unless xstate's differs.
    const lines = isDeepStrictEqual(state.value, valueOfKey(state.key)) ? [] : [`value: ${literal(state.value)}`]
    if (state.final) lines.push('final: true')
    if (state.awaitsRequest) lines.push('awaitsRequest: true')
    if (state.effect !== undefined) lines.push(`effect: ${literal(state.effect)}`)
    if (state.output) lines.push(`output: ${nameOf('output', state.output, state.key, 'its output')}`)
    if (state.outcome) lines.push(`outcome: ${nameOf('output', state.outcome, state.key, 'its meta.outcome')}`)
    if (state.step !== undefined) lines.push(`step: ${exportOf(state.step, state.key, 'its meta.step')}`)
    const events = Object.entries(state.transitions).map(([event, candidates]) => {
      const list = candidates.map((candidate, i) => `          ${transition(state, event, candidate, i)},`)
      return `        ${property(event)}: [\n${list.join('\n')}\n        ],`
    })
    if (events.length > 0) lines.push(`transitions: {\n${events.join('\n')}\n      }`)
    return lines.length > 0 ? `    ${property(state.key)}: {\n${lines.map((line) => `      ${line},`).join('\n')}\n    },` : `    ${property(state.key)}: {},`
  }

  const context = exportOf(chart.context, undefined, 'its initial context')
  const output = chart.output ? nameOf('output', chart.output, undefined, 'the machine output') : undefined
  const states = Object.values(chart.states).map(stateSource)
  const imports = [...used].sort((a, b) => a.localeCompare(b))
  const exportName = `${chart.id.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())}Chart`
  return `// Generated by scripts/compile-charts.ts from machines/${logicName}.machine.ts: do not edit, run \`npm run charts\`.
import { compiledChart } from '../engine/table.js'
import { ${imports.join(', ')} } from '../../machines/${logicName}.logic.js'

/** The ${chart.id} chart (version ${chart.version}), compiled: the table the engine steps. */
export const ${exportName} = compiledChart<typeof ${context}>({
  id: ${literal(chart.id)},
  version: ${literal(chart.version)},
  initial: ${literal(chart.initial)},
  context: ${context},
  effects: ${literal(chart.effects)},
${output ? `  output: ${output},\n` : ''}  states: {
${states.join('\n')}
  },
})
`
}

const isMachine = (value: unknown): value is AnyStateMachine =>
  typeof value === 'object' && value !== null && 'root' in value && 'config' in value && 'implementations' in value

/** Every split chart of `machines/`: its name, machine and logic module. */
async function splitCharts(): Promise<{ name: string; machine: AnyStateMachine; logic: LogicModule }[]> {
  const found = []
  for (const file of readdirSync(MACHINES_DIR).filter((entry) => entry.endsWith('.machine.ts')).sort()) {
    const name = basename(file, '.machine.ts')
    const logicPath = join(MACHINES_DIR, `${name}.logic.ts`)
    if (!existsSync(logicPath)) continue
    const logic = (await import(pathToFileURL(logicPath).href)) as LogicModule
    if (!isLogicModule(logic)) continue
    const module = (await import(pathToFileURL(join(MACHINES_DIR, file)).href)) as Record<string, unknown>
    const machines = Object.values(module).filter(isMachine)
    if (machines.length !== 1) {
      throw new Error(`machines/${file} exports ${machines.length} machines; a chart module exports exactly one`)
    }
    found.push({ name, machine: machines[0]!, logic })
  }
  return found
}

/** The file name → source of every table this script writes. */
export async function generatedCharts(): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  for (const { name, machine, logic } of await splitCharts()) files.set(`${machine.id}.ts`, generateChart(machine, logic, name))
  return files
}

/** The tables in `dir` (the committed ones by default) that differ from what this script writes, or should not be there. */
export async function staleCharts(dir = CHARTS_DIR): Promise<string[]> {
  const files = await generatedCharts()
  const stale: string[] = []
  for (const [file, source] of files) {
    const path = join(dir, file)
    if (!existsSync(path) || readFileSync(path, 'utf8') !== source) stale.push(file)
  }
  if (existsSync(dir)) {
    for (const file of readdirSync(dir)) if (file.endsWith('.ts') && !files.has(file)) stale.push(file)
  }
  return stale.sort()
}

async function main(): Promise<void> {
  try {
    if (process.argv.includes('--check')) {
      const stale = await staleCharts()
      if (stale.length > 0) {
        console.error(`Compiled charts out of date: ${stale.map((file) => `core/charts/${file}`).join(', ')}. Run \`npm run charts\`.`)
        process.exitCode = 1
      }
      return
    }
    const files = await generatedCharts()
    for (const file of existsSync(CHARTS_DIR) ? readdirSync(CHARTS_DIR) : []) {
      if (file.endsWith('.ts') && !files.has(file)) rmSync(join(CHARTS_DIR, file))
    }
    for (const [file, source] of files) writeFileSync(join(CHARTS_DIR, file), source)
    console.log(`Compiled ${[...files.keys()].map((file) => basename(file, '.ts')).join(', ')} into core/charts/.`)
  } catch (error) {
    if (!(error instanceof ChartCompileError)) throw error
    console.error(`Cannot compile the charts: ${error.message}`)
    process.exitCode = 1
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
