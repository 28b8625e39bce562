/**
 * The package's public entry points as source files: every subpath of package.json's `exports`
 * (a `*` subpath expanded to the files it matches), mapped from `dist/…/*.js` to its `.ts` source.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** `[subpath, source file]` for every export of the package, `authchart/providers/github` style. */
export function entryPoints() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const points = []
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue
    const built = target.default ?? target.svelte
    if (!built || !built.endsWith('.js')) continue
    const source = built.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')
    if (!key.includes('*')) {
      if (existsSync(join(root, source))) points.push([pkg.name + key.slice(1), source])
      continue
    }
    const folder = dirname(source)
    for (const name of readdirSync(join(root, folder)).sort()) {
      if (!name.endsWith('.ts') || name.endsWith('.d.ts')) continue
      points.push([pkg.name + key.slice(1).replace('*', name.slice(0, -3)), `${folder}/${name}`])
    }
  }
  return points
}
