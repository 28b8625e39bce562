/**
 * authchart's own model-based tests run on the exported test kit (`authchart/testing`), with
 * vitest, and leave each machine's coverage for the end-of-run summary.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'vitest'
import { describeFlowModel, type ModelCoverage, type ModelDriver } from '../../testing/index.js'

export { coverage, drivePath, modelPaths, type ModelDriver, type ModelEvent, type ModelPath } from '../../testing/index.js'

/** Where model tests leave their coverage for the end-of-run summary. */
export const COVERAGE_DIR = join(process.cwd(), 'node_modules', '.cache', 'authchart-model-coverage')

/** Records a machine's coverage for the end-of-run summary. */
export function reportCoverage(result: ModelCoverage): void {
  mkdirSync(COVERAGE_DIR, { recursive: true })
  writeFileSync(join(COVERAGE_DIR, `${result.machine}.json`), JSON.stringify(result))
}

/** Declares the model-based tests of a machine with vitest, reporting its coverage. */
export function describeModel<World>(title: string, driver: ModelDriver<World>): void {
  describeFlowModel(title, driver, { describe, it }, { onCoverage: reportCoverage })
}
