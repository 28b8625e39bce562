// An esbuild plugin that resolves `authchart` and its subpaths to the package's own sources, through
// package.json's `exports`: `authchart/adapters/postgres` → `./dist/adapters/postgres.js` → the
// `adapters/postgres.ts` the build compiles to it. For bundles of the sources (the demo, the runtime
// matrix, the bundle tests) that import the package by name as an application does.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

/** The `default` target of `exports` for `subpath` (`.`, `./jwt`, `./adapters/postgres`), `*` patterns included. */
function exportTarget(subpath) {
  for (const [pattern, conditions] of Object.entries(manifest.exports)) {
    const target = typeof conditions === 'string' ? conditions : conditions.default
    if (typeof target !== 'string') continue
    if (pattern === subpath) return target
    const star = pattern.indexOf('*')
    if (star < 0) continue
    const [before, after] = [pattern.slice(0, star), pattern.slice(star + 1)]
    if (subpath.length > before.length + after.length && subpath.startsWith(before) && subpath.endsWith(after)) {
      return target.replace('*', subpath.slice(before.length, subpath.length - after.length))
    }
  }
  return undefined
}

/**
 * The source file of `specifier` (`authchart` or `authchart/<subpath>`), or undefined when
 * package.json does not export it or its source is missing.
 */
export function sourceOf(specifier) {
  const target = exportTarget(`.${specifier.slice(manifest.name.length)}`)
  if (!target?.startsWith('./dist/')) return undefined
  const base = join(ROOT, target.slice('./dist/'.length).replace(/\.js$/, ''))
  return ['.ts', '.tsx', '.js'].map((extension) => base + extension).find((file) => existsSync(file))
}

/** The esbuild plugin: `authchart…` resolved by {@link sourceOf}; an unexported subpath is a build error. */
export const fromSources = {
  name: 'authchart-from-sources',
  setup(builder) {
    builder.onResolve({ filter: new RegExp(`^${manifest.name}(/|$)`) }, ({ path }) => {
      const file = sourceOf(path)
      return file ? { path: file } : { errors: [{ text: `${path} is not exported by package.json (or its source is missing)` }] }
    })
  },
}
