/**
 * Vitest global setup: clears the model-coverage records before the run and prints one line per
 * machine after it, e.g. `credentials-signin: 14/14 transitions`.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const COVERAGE_DIR = join(process.cwd(), 'node_modules', '.cache', 'authchart-model-coverage')

export function setup(): void {
  rmSync(COVERAGE_DIR, { recursive: true, force: true })
}

export function teardown(): void {
  if (!existsSync(COVERAGE_DIR)) return
  const lines = readdirSync(COVERAGE_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const { machine, covered, total, missing } = JSON.parse(
        readFileSync(join(COVERAGE_DIR, file), 'utf8'),
      ) as { machine: string; covered: number; total: number; missing: string[] }
      const gap = missing.length > 0 ? ` (missing: ${missing.join(', ')})` : ''
      return `  ${machine}: ${covered}/${total} transitions${gap}`
    })
  if (lines.length > 0) console.log(`\nModel-based transition coverage\n${lines.join('\n')}\n`)
}
