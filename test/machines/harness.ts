/**
 * authchart's own model-based tests run on the exported test kit (`authchart/testing`), with
 * vitest, and leave each machine's coverage for the end-of-run summary.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, it, vi, type Mock } from 'vitest'
import { describeFlowModel, type ModelCoverage, type ModelDriver } from '../../testing/index.js'

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

/** Declares the model-based tests of a machine with vitest, reporting its coverage. */
export function describeModel<World>(title: string, driver: ModelDriver<World>): void {
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
