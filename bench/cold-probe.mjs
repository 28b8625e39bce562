// One fresh Node process of the cold-start case (bench/cold-start.js):
// `node bench/cold-probe.mjs <handler module> <cookie> [<load-count file>]`. Imports the handler
// (a single-file bundle, or an entry importing the built package unbundled), answers a first
// session read, and prints one JSON line: the wall time of import + first read, the time since the
// process started, and the process's CPU time so far. With a load-count file (the process started
// with `--import ./bench/load-count.mjs`), also the files the handler loaded and their size.
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const [handler, cookie, countFile] = process.argv.slice(2)

const started = performance.now()
const { default: app } = await import(pathToFileURL(handler).href)
const first = await app.fetch(new Request('http://localhost/auth/session', { headers: { cookie } }))
const body = await first.text()
const coldMs = performance.now() - started
const sinceStartMs = performance.now()
const cpu = process.cpuUsage()

const packageNames = new Map()
/** The name in the nearest package.json above `dir` that has one (a build's folders may hold nameless ones), else `(entry)`. */
function packageOf(dir) {
  if (!packageNames.has(dir)) {
    let name
    try {
      name = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name
    } catch {}
    packageNames.set(dir, name ?? (dirname(dir) === dir ? '(entry)' : packageOf(dirname(dir))))
  }
  return packageNames.get(dir)
}

/** The files loaded, ES modules (from the hooks' record) and CommonJS ones (`require.cache`) alike, by package. */
function loaded() {
  const own = new Set([fileURLToPath(import.meta.url), fileURLToPath(new URL('./load-count.mjs', import.meta.url)), fileURLToPath(new URL('./load-count-hooks.mjs', import.meta.url))])
  const sizes = new Map()
  for (const line of readFileSync(countFile, 'utf8').split('\n').filter(Boolean)) {
    const [url, bytes] = line.split('\t')
    sizes.set(fileURLToPath(url), Number(bytes))
  }
  for (const path of Object.keys(createRequire(import.meta.url).cache)) if (!sizes.has(path)) sizes.set(path, statSync(path).size)
  const byPackage = {}
  let files = 0
  let bytes = 0
  for (const [path, size] of sizes) {
    if (own.has(path)) continue
    // Inside node_modules the folder names the package (a subfolder's package.json may name itself).
    const packageName = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? packageOf(dirname(path))
    byPackage[packageName] ??= { files: 0, bytes: 0 }
    byPackage[packageName].files++
    byPackage[packageName].bytes += size
    files++
    bytes += size
  }
  return { files, bytes, byPackage }
}

console.log(
  JSON.stringify({
    coldMs,
    sinceStartMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    status: first.status,
    body,
    ...(countFile ? { loaded: loaded() } : {}),
  }),
)
