/**
 * Writes the diagrams to `visualizations/out/` (`npm run diagrams`) and checks that the committed
 * files still match the machines (the test suite runs the check, so CI fails on drift).
 *
 * @module
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AnyStateMachine } from 'xstate'
import { builtInMachines, diagramFiles } from './flows.js'

/** Where the committed diagrams live (next to this module's folder in the repository). */
export const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), 'out')

/** Writes every diagram of `machines` to `dir`; returns the names written. */
export async function writeDiagrams(
  dir: string = OUT_DIR,
  machines: readonly AnyStateMachine[] = builtInMachines,
): Promise<string[]> {
  mkdirSync(dir, { recursive: true })
  const files = await diagramFiles(machines)
  for (const [name, content] of files) writeFileSync(join(dir, name), content)
  return [...files.keys()]
}

/** Files in `dir` that differ from what `machines` generate now, are missing, or are left over. */
export async function staleDiagrams(
  dir: string = OUT_DIR,
  machines: readonly AnyStateMachine[] = builtInMachines,
): Promise<string[]> {
  const files = await diagramFiles(machines)
  const stale: string[] = []
  for (const [name, content] of files) {
    const path = join(dir, name)
    if (!existsSync(path) || readFileSync(path, 'utf8') !== content) stale.push(name)
  }
  if (existsSync(dir)) {
    for (const name of readdirSync(dir)) if (!files.has(name) && !name.startsWith('.')) stale.push(name)
  }
  return stale.sort()
}

// `node dist/visualizations/files.js [--check]`: the `diagrams` script.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.env.DIAGRAMS_OUT ?? join(process.cwd(), 'visualizations', 'out')
  if (process.argv.includes('--check')) {
    const stale = await staleDiagrams(dir)
    if (stale.length > 0) {
      console.error(`Diagrams out of date: ${stale.join(', ')}. Run \`npm run diagrams\`.`)
      process.exitCode = 1
    } else {
      console.log('Diagrams match the machines.')
    }
  } else {
    const written = await writeDiagrams(dir)
    console.log(`Wrote ${written.length} files to ${dir}`)
  }
}
