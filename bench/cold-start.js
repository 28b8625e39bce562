// The cold start on Node in two shapes, each above a bare handler: the single-file esbuild bundle
// of the credentials-only configuration (scripts/bundle.mjs, as an esbuild Lambda build emits it)
// and the package imported unbundled (`dist/core/index.js` and the chunks and packages it imports, as a
// Node server loads it without a bundler). Per handler: the wall time of import + first session
// read and the process's CPU time until then, medians of fresh processes in alternating order; and,
// from one more process with a loader hook counting `load` calls, how many files and how many KiB
// of source the handler loaded.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { encode } from '@auth/core/jwt'
import { bundle, entrySource } from '../scripts/bundle.mjs'
import { BARE, BUNDLE_SECRET, SESSION_COOKIE } from './edge.js'
import { median } from './harness.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const PROBE = fileURLToPath(new URL('./cold-probe.mjs', import.meta.url))
const LOAD_COUNT = new URL('./load-count.mjs', import.meta.url).href
/** The two shapes, in the order the report lists them. */
export const SHAPES = ['unbundled', 'bundle']

function node(args, env = {}) {
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, args, { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      error ? reject(Object.assign(error, { output: `${stdout}\n${stderr}` })) : resolvePromise(JSON.parse(stdout.trim().split('\n').at(-1))),
    )
  })
}

/**
 * The handler files of one library build: the unbundled entry (importing the built files by URL,
 * resolved from `root`'s package.json as an application's import would be) and the bundle.
 */
async function handlerFiles({ name, library, root }, outdir) {
  const slug = name.replace(/[^a-z0-9]+/gi, '_')
  const fromRoot = createRequire(join(root, 'package.json'))
  const unbundled = join(outdir, `unbundled-${slug}.mjs`)
  writeFileSync(unbundled, `${entrySource(library, 'credentials', { resolveSpecifier: (specifier) => pathToFileURL(fromRoot.resolve(specifier)).href })}\n`)
  const bundleDir = join(outdir, `bundle-${slug}`)
  mkdirSync(bundleDir, { recursive: true })
  const { outfile } = await bundle({ library, configuration: 'credentials', target: 'node', outdir: bundleDir, root })
  return { unbundled, bundle: outfile }
}

function checkAnswer(handler, result) {
  const user = handler.name === 'bare' ? null : JSON.parse(result.body)?.user
  if (result.status !== 200 || (handler.name !== 'bare' && user?.name !== 'Alice')) {
    throw new Error(`cold start: ${handler.name} answered ${result.status} ${result.body.slice(0, 200)}`)
  }
}

/**
 * Cold starts of `builds` (each `{ name, library, root }`: `library` is `authchart` or
 * `@auth/core`, `root` the checkout its package resolves from), both shapes each, next to the bare
 * handler: `processes` fresh processes per handler, the order alternating from one to the next.
 */
export async function coldStarts({ builds, processes = 7, log = () => {} }) {
  const outdir = mkdtempSync(join(tmpdir(), 'authchart-bench-cold-'))
  try {
    const cookie = `${SESSION_COOKIE}=${await encode({ token: { sub: 'alice-1', name: 'Alice', email: 'alice@example.com' }, secret: BUNDLE_SECRET, salt: SESSION_COOKIE })}`
    const bareFile = join(outdir, 'bare.mjs')
    writeFileSync(bareFile, BARE)
    const handlers = [{ name: 'bare', file: bareFile }]
    for (const build of builds) {
      const files = await handlerFiles({ ...build, root: build.root ?? ROOT }, outdir)
      for (const shape of SHAPES) handlers.push({ name: `${build.name} (${shape})`, build: build.name, shape, file: files[shape] })
    }
    const samples = Object.fromEntries(handlers.map((h) => [h.name, []]))
    for (let i = 0; i < processes; i++) {
      for (const handler of i % 2 === 0 ? handlers : [...handlers].reverse()) {
        const result = await node([PROBE, handler.file, cookie])
        checkAnswer(handler, result)
        samples[handler.name].push(result)
      }
    }
    const loaded = {}
    for (const handler of handlers) {
      const countFile = join(outdir, `loaded-${handler.name.replace(/[^a-z0-9]+/gi, '_')}.tsv`)
      writeFileSync(countFile, '')
      const result = await node(['--import', LOAD_COUNT, PROBE, handler.file, cookie, countFile], { BENCH_LOAD_COUNT: countFile })
      checkAnswer(handler, result)
      loaded[handler.name] = result.loaded
    }
    const medians = Object.fromEntries(
      handlers.map((h) => [h.name, Object.fromEntries(['coldMs', 'cpuMs', 'sinceStartMs'].map((key) => [key, median(samples[h.name].map((s) => s[key]))]))]),
    )
    const bare = medians.bare
    // On a loaded machine noise only ever adds: the cheapest process of each is the steadier view.
    const cheapest = (name, key) => Math.min(...samples[name].map((s) => s[key]))
    log(`  measured cold start (${processes} processes per handler)`)
    return {
      processes,
      bare: { ...bare, loaded: loaded.bare },
      handlers: handlers.slice(1).map((h) => ({
        name: h.name,
        build: h.build,
        shape: h.shape,
        ...medians[h.name],
        aboveBare: { coldMs: medians[h.name].coldMs - bare.coldMs, cpuMs: medians[h.name].cpuMs - bare.cpuMs, sinceStartMs: medians[h.name].sinceStartMs - bare.sinceStartMs },
        cheapestAboveBare: { coldMs: cheapest(h.name, 'coldMs') - cheapest('bare', 'coldMs'), cpuMs: cheapest(h.name, 'cpuMs') - cheapest('bare', 'cpuMs') },
        loaded: loaded[h.name],
        samples: { coldMs: samples[h.name].map((s) => s.coldMs), cpuMs: samples[h.name].map((s) => s.cpuMs) },
      })),
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}
