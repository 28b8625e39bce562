// The package's JavaScript: every module an application can import (each target of package.json's
// `exports` and `bin`), bundled by esbuild with code splitting, so that one import loads a few
// chunks instead of a file per source module. A server running the package on Node without a
// bundler spends most of its start resolving, reading and linking modules: 160 files cost about
// twice the CPU of the same code in a dozen. Code shared by two entry points lives in one chunk,
// so a module's state (caches, brands, registries) is one instance whatever the import. Every
// dependency stays an import of its package. The declarations are tsc's (`--emitDeclarationOnly`).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/**
 * Modules imported by a path inside `dist/` rather than through `exports`: the diagram writer of
 * `npm run diagrams` and the Node request converter the benchmarks load.
 */
const EXTRA_ENTRIES = ['visualizations/files.ts', 'integrations/node/index.ts']

/**
 * superstruct's `main` is its CommonJS build, which Node would load (through its CommonJS lexer)
 * for an ES module's import; its ES build is `dist/index.mjs`, which bundlers already pick by its
 * `module` field. Rewritten in the output only: the sources and their types name the package.
 */
const ESM_OF = { superstruct: 'superstruct/dist/index.mjs' }

/** Every `.ts` file (not `.d.ts`) under `dir`, relative to the root. */
function sourcesUnder(dir) {
  const found = []
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name)
    if (statSync(join(ROOT, path)).isDirectory()) found.push(...sourcesUnder(path))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) found.push(path)
  }
  return found
}

/** The source of `dist/<path>.js`, or every source a `dist/<dir>/*.js` pattern can reach. */
function sourcesOf(target) {
  if (typeof target !== 'string' || !target.startsWith('./dist/') || !target.endsWith('.js')) return []
  const path = target.slice('./dist/'.length, -'.js'.length)
  if (path.endsWith('/*')) return sourcesUnder(path.slice(0, -2))
  return existsSync(join(ROOT, `${path}.ts`)) ? [`${path}.ts`] : []
}

/** The entry points: what `exports` and `bin` name, and {@link EXTRA_ENTRIES}. */
export function entryPoints() {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const targets = []
  for (const value of Object.values(manifest.exports)) {
    if (typeof value === 'string') targets.push(value)
    else targets.push(...Object.entries(value).filter(([condition]) => condition !== 'types').map(([, target]) => target))
  }
  targets.push(...Object.values(manifest.bin ?? {}))
  const sources = new Set([...targets.flatMap(sourcesOf), ...EXTRA_ENTRIES])
  return [...sources].sort()
}

const esmOf = {
  name: 'esm-of',
  setup(builder) {
    const names = Object.keys(ESM_OF)
    builder.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => ({ path: ESM_OF[args.path], external: true }))
  },
}

/** The module every other entry point is built to reach: the engine (`authchart`). */
const KERNEL = 'core/index.ts'
/**
 * Entry points that run in the browser: built alone, so that a client bundle carries what they
 * import and not the engine.
 */
const BROWSER_ENTRIES = new Set(['integrations/next/react.ts', 'integrations/sveltekit/client.ts'])
const WRAPPED = 'reaches-kernel'

/**
 * esbuild puts each module in the chunk of the set of entry points (static and dynamic) that reach
 * it. With a hundred entry points reaching different parts of the engine, that set differs from
 * module to module, and importing `authchart` loaded 54 chunks. Built so that every entry point
 * and every dynamically imported module also reaches the engine's entry, the engine's modules
 * share one set and land in one chunk; what an entry adds stays in its own. The wrapper re-exports
 * the module unchanged and imports the engine's namespace without using it.
 */
function reachesKernel(exportsOf) {
  const kernel = join(ROOT, KERNEL)
  return {
    name: WRAPPED,
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`^${WRAPPED}:`) }, (args) => ({ path: args.path.slice(WRAPPED.length + 1), namespace: WRAPPED }))
      builder.onResolve({ filter: /^\./ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData === WRAPPED) return undefined
        const resolved = await builder.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: WRAPPED })
        if (resolved.errors.length > 0 || resolved.external || !resolved.path.startsWith(ROOT)) return undefined
        return { path: relative(ROOT, resolved.path), namespace: WRAPPED }
      })
      // What a wrapper imports runs when the wrapper does: a command line (the `bin`) exports nothing.
      builder.onResolve({ filter: /.*/, namespace: WRAPPED }, (args) => (args.kind === 'entry-point' ? undefined : { path: args.path, sideEffects: true }))
      builder.onLoad({ filter: /.*/, namespace: WRAPPED }, (args) => {
        const file = JSON.stringify(join(ROOT, args.path))
        const lines = [`import ${file}`, `export * from ${file}`, `import * as __kernel from ${JSON.stringify(kernel)}`]
        if (exportsOf.get(args.path)?.includes('default')) lines.push(`export { default } from ${file}`)
        return { contents: `${lines.join('\n')}\n`, resolveDir: ROOT, loader: 'js' }
      })
    },
  }
}

const OPTIONS = {
  absWorkingDir: ROOT,
  outbase: '.',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  // Bare imports of modules that only augment types (e.g. the adapter's password methods).
  logOverride: { 'ignored-bare-import': 'silent' },
}

/** Bundles the entry points into `dist/`; answers esbuild's metafile. */
export async function buildDist({ outdir = join(ROOT, 'dist') } = {}) {
  const entries = entryPoints()
  // A first pass, not written, for what each module exports (whether a wrapper re-exports a default).
  const survey = await build({ ...OPTIONS, entryPoints: entries, outdir, write: false, metafile: true, plugins: [esmOf] })
  const exportsOf = new Map()
  for (const output of Object.values(survey.metafile.outputs)) if (output.entryPoint) exportsOf.set(output.entryPoint, output.exports)
  for (const input of Object.values(survey.metafile.inputs)) {
    for (const record of input.imports) if (record.kind === 'dynamic-import' && !record.external) exportsOf.set(record.path, null)
  }
  const dynamic = [...exportsOf].filter(([, exports]) => exports === null).map(([path]) => path)
  if (dynamic.length > 0) {
    const targets = await build({ ...OPTIONS, entryPoints: dynamic, outdir, write: false, metafile: true, plugins: [esmOf] })
    for (const output of Object.values(targets.metafile.outputs)) if (output.entryPoint) exportsOf.set(output.entryPoint, output.exports)
  }
  const result = await build({
    ...OPTIONS,
    entryPoints: entries.map((entry) => ({
      in: entry === KERNEL || BROWSER_ENTRIES.has(entry) ? entry : `${WRAPPED}:${entry}`,
      out: entry.slice(0, -'.ts'.length),
    })),
    outdir,
    metafile: true,
    plugins: [esmOf, reachesKernel(exportsOf)],
  })
  for (const entry of entries) keepPrologue(entry, join(outdir, `${entry.slice(0, -'.ts'.length)}.js`))
  return result.metafile
}

/**
 * Puts an entry's hashbang (the command line's) and its directive (`'use client'`, which Next.js
 * reads on the first line) back on top of its output: a wrapped entry's module is not the first.
 */
function keepPrologue(source, output) {
  const text = readFileSync(join(ROOT, source), 'utf8')
  const hashbang = /^#!.*\n/.exec(text)?.[0] ?? ''
  const directive = /^(?:\s|\/\*[\s\S]*?\*\/|\/\/.*\n)*(['"]use (?:client|server)['"])/.exec(text.slice(hashbang.length))?.[1]
  if (!hashbang && !directive) return
  let built = readFileSync(output, 'utf8').replace(/^#!.*\n/, '').replace(/^(['"])use (client|server)\1;?\n/, '')
  built = `${hashbang}${directive ? `${directive}\n` : ''}${built}`
  writeFileSync(output, built)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `--outdir <dir>`: elsewhere than dist/ (the package test builds a copy of its own).
  const at = process.argv.indexOf('--outdir')
  const metafile = await buildDist(at > 0 ? { outdir: resolve(process.argv[at + 1]) } : {})
  const outputs = Object.entries(metafile.outputs).filter(([path]) => path.endsWith('.js'))
  const chunks = outputs.filter(([path]) => path.includes('/chunks/') || path.startsWith('chunks/'))
  console.log(`dist: ${outputs.length - chunks.length} entry points, ${chunks.length} shared chunks`)
}
