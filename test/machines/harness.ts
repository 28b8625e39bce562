/**
 * authchart's own model-based tests run on the exported test kit (`authchart/testing`), with
 * vitest, and leave each machine's coverage for the end-of-run summary.
 *
 * @module
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it, vi, type Mock } from 'vitest'
import { chartState, finalOutput, outcomeAt, stepChart } from '../../core/engine/chart.js'
import { stateLabel } from '../../core/engine/transitions.js'
import type { CompiledChart } from '../../core/engine/types.js'
import { everyFlow } from '../../core/flows/catalogue.js'
import { loadedFlows } from '../../core/flows/loaded.js'
import { outcomeOf } from '../../core/engine/advance.js'
import { describeFlowModel, modelPaths, type ModelCoverage, type ModelDriver } from '../../testing/index.js'

export { coverage, drivePath, modelPaths, type ModelDriver, type ModelEvent, type ModelPath } from '../../testing/index.js'

/** Where model tests leave their coverage for the end-of-run summary. */
export const COVERAGE_DIR = join(process.cwd(), 'node_modules', '.cache', 'authchart-model-coverage')

/** Records a machine's coverage for the end-of-run summary. */
export function reportCoverage(result: ModelCoverage): void {
  // Mutation runs (test/mutation/vitest.config.ts) share node_modules/.cache with `npm test`.
  if (process.env.AUTHCHART_MODEL_COVERAGE === 'off') return
  mkdirSync(COVERAGE_DIR, { recursive: true })
  writeFileSync(join(COVERAGE_DIR, `${result.machine}.json`), JSON.stringify(result))
}

const CHARTS_DIR = join(import.meta.dirname, '..', '..', 'core', 'charts')

/** The tables generated at build time (`core/charts/`), by chart id. */
export const generatedCharts: ReadonlyMap<string, CompiledChart> = new Map(
  await Promise.all(
    readdirSync(CHARTS_DIR)
      .filter((file) => file.endsWith('.ts'))
      .map(async (file) => {
        const module = (await import(pathToFileURL(join(CHARTS_DIR, file)).href)) as Record<string, CompiledChart>
        const chart = Object.values(module)[0]!
        return [chart.id, chart] as const
      }),
  ),
)

/**
 * Steps `chart` beside xstate along every model path of `driver`, on every transition: the same
 * state, context, and outcome at rest.
 */
export function expectChartStepsAsXstate<World>(driver: ModelDriver<World>, chart: CompiledChart): number {
  let steps = 0
  for (const path of modelPaths(driver)) {
    const first = path.steps[0]!.before
    let state = chartState(chart, stateLabel(first.value))!
    let context = first.context as Record<string, unknown>
    for (const { event, after } of path.steps) {
      const step = stepChart(chart, state, context, event)
      expect(step, `${path.description}: ${state.key} takes ${event.type}`).toBeDefined()
      ;({ state, context } = step!)
      expect(state.key, path.description).toBe(stateLabel(after.value))
      expect(state.value).toEqual(after.value)
      expect(context).toEqual(after.context)
      if (after.status === 'done') expect(finalOutput(chart, state, context, event)).toEqual(after.output)
      else if (state.awaitsRequest) expect(outcomeAt(chart, state, context, event)).toEqual(outcomeOf(after))
      steps++
    }
  }
  return steps
}

/**
 * Declares the model-based tests of a machine with vitest, reporting its coverage. For a chart
 * compiled at build time, the engine runs the generated table (so every modelled transition the
 * engine takes is checked against xstate's), and the table is also stepped beside xstate directly.
 */
export function describeModel<World>(title: string, driver: ModelDriver<World>): void {
  const generated = generatedCharts.get(driver.machine.id)
  if (generated) {
    describe(`${title}, compiled at build time`, () => {
      it('is what the engine runs', async () => {
        // Every flow shipped: the built-in ones and the optional features' (step-up, second factor, passkeys).
        const module = (await loadedFlows(everyFlow)).find((flow) => flow.flow.chart.id === driver.machine.id)
        expect(module?.flow.chart).toBe(generated)
      })
      it('steps as xstate on every transition of every model path', () => {
        expect(expectChartStepsAsXstate(driver, generated)).toBeGreaterThan(0)
      })
    })
  }
  describeFlowModel(title, driver, { describe, it }, { onCoverage: reportCoverage })
}

/** The attributes of every authchart cookie under secure cookies (HTTPS). */
export const SECURE_ATTRIBUTES = { path: '/', httponly: true, secure: true, samesite: 'Lax' } as const
/** A compact JWE with `dir` key management: a session token or a sealed flow. */
export const JWE = /^eyJ[\w-]*\.\.[\w-]+\.[\w-]+\.[\w-]+$/
/** A database session token. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** Epoch seconds as a cookie's `Expires` attribute writes them. */
export const httpDate = (seconds: number): string => new Date(seconds * 1000).toUTCString()

/** Stops the clock at `seconds` for the whole test file, so expiries can be expected exactly. */
export function freezeClock(seconds: number): void {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(seconds * 1000)
  afterAll(() => vi.useRealTimers())
}

/** The types of the errors a spy logger recorded since the last call (which it then forgets). */
export function takeLoggedErrors(logger: { error: Mock<(...args: never[]) => unknown> }): string[] {
  const types = logger.error.mock.calls.map((call) => {
    const error = (call as unknown[])[0] as { type?: string; name: string }
    return error.type ?? error.name
  })
  logger.error.mockClear()
  return types
}
