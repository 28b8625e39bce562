/**
 * The generated chart tables (`core/charts/`) match the machines they are compiled from: the check
 * `npm run build` runs (`npm run charts:check`) passes on the committed tables, and fails on a table
 * that was edited, is missing or has no chart.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readdirSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { chartOf } from '../../core/engine/runtime-compiler.js'
import type { AnyStateMachine } from 'xstate'
import type { CompiledChart } from '../../core/engine/types.js'
import { flowMachines } from '../../machines/index.js'
import { CHARTS_DIR, generatedCharts, staleCharts } from '../../scripts/compile-charts.js'

const ROOT = join(import.meta.dirname, '..', '..')
const scratch = mkdtempSync(join(tmpdir(), 'authchart-charts-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe('the compiled charts', () => {
  it('are committed for every split chart and match their machines (run `npm run charts` after editing one)', async () => {
    expect([...(await generatedCharts()).keys()]).toEqual(expect.arrayContaining(['credentials-signin.ts', 'session.ts', 'logout.ts']))
    expect(await staleCharts()).toEqual([])
  })

  it('load as exactly the table the run-time compiler builds from the machine: nothing derived at load differs', async () => {
    const machines = new Map(flowMachines.map((machine) => [machine.id, machine]))
    for (const file of readdirSync(join(ROOT, 'machines')).filter((name) => name.endsWith('.machine.ts'))) {
      const module = (await import(pathToFileURL(join(ROOT, 'machines', file)).href)) as Record<string, unknown>
      for (const value of Object.values(module)) {
        if (typeof value === 'object' && value !== null && 'root' in value && 'id' in value) machines.set((value as AnyStateMachine).id, value as AnyStateMachine)
      }
    }
    const files = readdirSync(CHARTS_DIR).filter((file) => file.endsWith('.ts'))
    expect(files.length).toBeGreaterThanOrEqual(10)
    for (const file of files) {
      const module = (await import(pathToFileURL(join(CHARTS_DIR, file)).href)) as Record<string, CompiledChart>
      const [table] = Object.values(module)
      const machine = machines.get(table!.id)
      expect(machine, `core/charts/${file}: a machine with its id`).toBeDefined()
      expect(table, `core/charts/${file}`).toStrictEqual(chartOf(machine!))
    }
  })

  it('pass the check the build runs', () => {
    const out = execFileSync(process.execPath, ['--import', './test/scale/ts-register.mjs', 'scripts/compile-charts.ts', '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
    expect(out).toBe('')
  })

  it('fail the check when a table was edited by hand, is missing, or names no chart', async () => {
    const copy = join(scratch, 'charts')
    cpSync(CHARTS_DIR, copy, { recursive: true })
    const session = join(copy, 'session.ts')
    writeFileSync(session, readFileSync(session, 'utf8').replace("version: '", "version: '9"))
    rmSync(join(copy, 'logout.ts'))
    writeFileSync(join(copy, 'retired.ts'), '// a chart that no longer exists\n')
    expect(await staleCharts(copy)).toEqual(['logout.ts', 'retired.ts', 'session.ts'])
  })
})
