#!/usr/bin/env node
// Builds dist/ only when a source the build reads is newer than the last build (`dist/.built-at`,
// written by `npm run build`), so `npm run demo` starts in seconds from a built tree and rebuilds
// only after a change (a first start after `npm ci` builds once).
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const SOURCES = ['core', 'machines', 'providers', 'adapters', 'stores', 'extensions', 'integrations', 'testing', 'visualizations']
const FILES = ['package.json', 'scripts/build-dist.mjs', 'tsconfig.json', 'tsconfig.base.json', 'tsconfig.build.json', 'tsconfig.node.json', 'tsconfig.node.build.json']

/** The newest modification time under `path` (milliseconds), 0 when it does not exist. */
function newest(path) {
  let stats
  try {
    stats = statSync(path)
  } catch {
    return 0
  }
  if (!stats.isDirectory()) return stats.mtimeMs
  let latest = stats.mtimeMs
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)))
  return latest
}

const builtAt = newest(join(root, 'dist/.built-at'))
const sourcesAt = Math.max(...SOURCES.map((dir) => newest(join(root, dir))), ...FILES.map((file) => newest(join(root, file))))
if (builtAt > 0 && builtAt >= sourcesAt) {
  console.log('dist/ is up to date')
} else {
  console.log(builtAt === 0 ? 'dist/ is not built: building' : 'sources changed since the last build: building')
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  process.exitCode = build.status ?? 1
}
