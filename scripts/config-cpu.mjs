// The CPU a fresh process spends resolving a credentials-only configuration, and its first session
// read, as the median of several processes (each bundled once from the sources with esbuild).
//
//   node scripts/config-cpu.mjs                       # 15 processes
//   node scripts/config-cpu.mjs --runs 31
//   node scripts/config-cpu.mjs --base <dir>          # A/B: the same probe from another checkout
//                                                     # (its sources, e.g. `git archive <ref>`),
//                                                     # processes interleaved, medians side by side
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' }, base: { type: 'string' } } })

const PROBE = `
import { Auth } from './core/index.ts'
import { resolveConfig } from './core/config/resolve-config.ts'
import Credentials from './providers/credentials.ts'
const config = {
  secret: 'a measurement secret of at least 32 characters',
  trustHost: true,
  providers: [Credentials({ credentials: { password: {} }, authorize: () => null })],
}
const cpu = (start) => { const used = process.cpuUsage(start); return (used.user + used.system) / 1000 }
let start = process.cpuUsage()
const resolution = resolveConfig(config)
const resolveMs = cpu(start)
if (!resolution.ok) throw resolution.error
start = process.cpuUsage()
const response = await Auth(new Request('http://localhost/auth/session'), config)
await response.text()
const sessionMs = cpu(start)
process.stdout.write(JSON.stringify({ resolveMs, sessionMs }))
`

const work = mkdtempSync(join(tmpdir(), 'authchart-config-cpu-'))

/** The probe bundled from the sources under `root`. */
async function probeOf(root, name) {
  const outfile = join(work, `${name}.mjs`)
  await build({
    stdin: { contents: PROBE, resolveDir: root, loader: 'ts', sourcefile: 'probe.ts' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile,
    logLevel: 'error',
  })
  return outfile
}

const median = (samples, key) => {
  const sorted = samples.map((sample) => sample[key]).sort((a, b) => a - b)
  return Number(sorted[Math.floor(sorted.length / 2)].toFixed(2))
}
const summary = (samples) => ({ resolveMs: median(samples, 'resolveMs'), firstSessionReadMs: median(samples, 'sessionMs') })

try {
  const probes = { current: await probeOf(ROOT, 'current') }
  if (values.base) probes.base = await probeOf(resolve(values.base), 'base')
  const samples = Object.fromEntries(Object.keys(probes).map((name) => [name, []]))
  for (let run = 0; run < Number(values.runs); run++) {
    for (const [name, outfile] of Object.entries(probes)) {
      samples[name].push(JSON.parse(execFileSync(process.execPath, [outfile], { encoding: 'utf8' })))
    }
  }
  const result = { runs: Number(values.runs), ...Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summary(list)])) }
  console.log(JSON.stringify(result))
} finally {
  rmSync(work, { recursive: true, force: true })
}
