// Edge cost next to @auth/core, in the same run: bundle size per configuration (scripts/bundle.mjs;
// single-file bundles, and the split-chunk shape of the credentials-only one),
// and per runtime (Node, Bun, Deno, workerd) the cold start (import + first session read, above a
// bare handler, median of N fresh processes) and the warm session read.
//
// Every handler is the esbuild bundle of the credentials-only configuration (the Node ESM bundle on
// Node, Bun and Deno; the worker bundle on workerd), next to a bare handler answering the same JSON.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { encode } from '@auth/core/jwt'
import { bundle, bundleAll, bundleSplit, CONFIGURATIONS } from '../scripts/bundle.mjs'
import { loadMiniflare, runtimeBinary } from '../test/runtimes/launch.mjs'
import { median } from './harness.js'

/** The secret the bundle entries fall back to when the runtime has no environment (workerd). */
export const BUNDLE_SECRET = 'a bundle-size secret of at least 32 characters'
/** The session cookie's name over plain HTTP (no `__Secure-` prefix): the key derivation's salt. */
export const SESSION_COOKIE = 'authjs.session-token'
const PROBE = new URL('./edge-probe.mjs', import.meta.url).pathname
/** The bare handler: the same JSON a session read without a session answers, no library. */
export const BARE = "export default { fetch: () => new Response('null', { headers: { 'content-type': 'application/json' } }) }\n"

/** Bundle sizes of every configuration, both libraries, both targets. */
export async function bundleSizes() {
  const outdir = mkdtempSync(join(tmpdir(), 'authchart-bench-bundles-'))
  try {
    const results = await bundleAll({ outdir })
    const pick = (target, configuration, library) =>
      results.find((r) => r.target === target && r.configuration === configuration && r.library === library)
    const singleFile = ['edge', 'node'].flatMap((target) =>
      CONFIGURATIONS.map((configuration) => {
        const ours = pick(target, configuration, 'authchart')
        const theirs = pick(target, configuration, '@auth/core')
        return {
          target,
          configuration,
          authchart: { bytes: ours.bytes, gzipBytes: ours.gzipBytes },
          authjs: { bytes: theirs.bytes, gzipBytes: theirs.gzipBytes },
          ratio: ours.bytes / theirs.bytes,
          gzipRatio: ours.gzipBytes / theirs.gzipBytes,
        }
      }),
    )
    // The split-chunk shape (as Next.js, Vite and Rollup emit code), credentials only: what a cold
    // start loads (the entry and its static chunks). Reported next to the single-file bundle, not
    // instead of it.
    const [ours, theirs] = await Promise.all(
      ['authchart', '@auth/core'].map((library) => bundleSplit({ library, configuration: 'credentials', target: 'edge', outdir })),
    )
    const split = {
      target: 'edge, split: loaded at start',
      configuration: 'credentials',
      split: true,
      authchart: ours.atStart,
      authjs: theirs.atStart,
      ratio: ours.atStart.bytes / theirs.atStart.bytes,
      gzipRatio: ours.atStart.gzipBytes / theirs.atStart.gzipBytes,
      allChunks: { authchart: ours.all, authjs: theirs.all },
    }
    return [...singleFile, split]
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}

function run(command, args) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' } }, (error, stdout, stderr) =>
      error ? reject(Object.assign(error, { output: `${stdout}\n${stderr}` })) : resolve(stdout),
    )
  })
}

async function probe(runtime, file, cookie, reads) {
  const args = { node: [process.execPath, [PROBE]], bun: [runtimeBinary('bun'), ['run', PROBE]], deno: [runtimeBinary('deno'), ['run', '--allow-all', PROBE]] }[runtime]
  const stdout = await run(args[0], [...args[1], file, cookie, String(reads)])
  const result = JSON.parse(stdout.trim().split('\n').at(-1))
  if (result.status !== 200) throw new Error(`${runtime}: ${file} answered ${result.status}`)
  return result
}

/** workerd through miniflare: start, first session read, then `reads` sequential reads (over its loopback). */
async function probeWorkerd(file, cookie, reads) {
  const { Miniflare } = await loadMiniflare()
  const started = performance.now()
  const mf = new Miniflare({ modules: [{ type: 'ESModule', path: 'worker.mjs', contents: readFileSync(file, 'utf8') }], compatibilityDate: '2025-09-01', compatibilityFlags: ['nodejs_compat'] })
  try {
    const read = async () => {
      const response = await mf.dispatchFetch('http://localhost/auth/session', { headers: { cookie } })
      await response.text()
      return response
    }
    const first = await read()
    const coldMs = performance.now() - started
    if (first.status !== 200) throw new Error(`workerd: ${file} answered ${first.status}`)
    for (let i = 0; i < Math.min(reads, 100); i++) await read()
    const readStarted = performance.now()
    for (let i = 0; i < reads; i++) await read()
    return { coldMs, readUs: reads > 0 ? ((performance.now() - readStarted) * 1000) / reads : undefined }
  } finally {
    await mf.dispose()
  }
}

/**
 * Cold start and session read per runtime: `processes` fresh processes per handler (alternating
 * the order), then one process per handler timing `reads` warm session reads.
 */
export async function runtimeCosts({ runtimes = ['node', 'bun', 'deno', 'workerd'], processes = 7, reads = 2000, log = () => {} } = {}) {
  const outdir = mkdtempSync(join(tmpdir(), 'authchart-bench-edge-'))
  try {
    const cookie = `${SESSION_COOKIE}=${await encode({ token: { sub: 'alice-1', name: 'Alice', email: 'alice@example.com' }, secret: BUNDLE_SECRET, salt: SESSION_COOKIE })}`
    const files = {}
    for (const target of ['node', 'edge']) {
      const bare = join(outdir, `${target}-bare.mjs`)
      writeFileSync(bare, BARE)
      files[target] = { bare }
      for (const library of ['authchart', '@auth/core']) {
        files[target][library] = (await bundle({ library, configuration: 'credentials', target, outdir })).outfile
      }
    }
    const handlers = ['bare', 'authchart', '@auth/core']
    const results = {}
    for (const runtime of runtimes) {
      const target = runtime === 'workerd' ? 'edge' : 'node'
      const measure = (handler, count) =>
        runtime === 'workerd' ? probeWorkerd(files[target][handler], cookie, count) : probe(runtime, files[target][handler], cookie, count)
      const cold = Object.fromEntries(handlers.map((h) => [h, []]))
      for (let i = 0; i < processes; i++) {
        const order = i % 2 === 0 ? handlers : [...handlers].reverse()
        for (const handler of order) cold[handler].push((await measure(handler, 0)).coldMs)
      }
      const readUs = {}
      for (const handler of handlers) readUs[handler] = (await measure(handler, runtime === 'workerd' ? Math.round(reads / 4) : reads)).readUs
      const coldMs = Object.fromEntries(handlers.map((h) => [h, median(cold[h])]))
      results[runtime] = {
        coldMs,
        aboveBareMs: { authchart: coldMs.authchart - coldMs.bare, authjs: coldMs['@auth/core'] - coldMs.bare },
        sessionReadUs: { bare: readUs.bare, authchart: readUs.authchart, authjs: readUs['@auth/core'] },
      }
      log(`  measured edge cost on ${runtime}`)
    }
    return results
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}
