// Starts the runtime matrix's app on Node, Bun, Deno and workerd: each entry under ./entries is
// bundled from the sources with esbuild (the package names mapped to the sources, as the vitest
// aliases do), then run by the runtime installed from npm: `bun`, `deno` and `miniflare` (which
// brings `workerd`) are this folder's own dependencies (test/runtimes/package.json, about 360 MB),
// installed on first use with `npm ci` here rather than by the package's `npm ci`, which a user
// trying the demo runs. An install that fails throws with the command to run. Plain JavaScript, so
// that `npm run bench` starts the same runtimes.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { fromSources } from '../../scripts/from-sources.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const RUNTIMES_DIR = join(ROOT, 'test/runtimes')
const require = createRequire(join(RUNTIMES_DIR, 'package.json'))

/** The runtimes of the matrix. */
export const RUNTIMES = ['node', 'bun', 'deno', 'workerd']

const INSTALL_COMMAND = 'npm ci --prefix test/runtimes'

/**
 * Installs the runtimes (test/runtimes/package-lock.json) unless the installed tree is that lock's.
 * Synchronous and idempotent: every caller may call it first.
 *
 * @throws {Error} with the command to run, when npm fails (offline with an empty cache, for instance).
 */
export function installRuntimes() {
  const installed = join(RUNTIMES_DIR, 'node_modules/.package-lock.json')
  const lock = join(RUNTIMES_DIR, 'package-lock.json')
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lock).mtimeMs) return
  const npm = spawnSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: RUNTIMES_DIR,
    encoding: 'utf8',
  })
  if (npm.status !== 0) {
    throw new Error(`The runtime matrix's runtimes could not be installed; run ${INSTALL_COMMAND}:\n${npm.stderr || npm.error}`)
  }
}

/** miniflare (workerd), from the runtimes' own install. */
export async function loadMiniflare() {
  installRuntimes()
  return import(pathToFileURL(require.resolve('miniflare')).href)
}

/** `authchart` and its subpaths resolved to the sources (see scripts/from-sources.mjs). */
export { fromSources }

const isExecutable = (path) => existsSync(path) && statSync(path).size > 1_000_000

function packageFile(name, file) {
  try {
    return join(dirname(require.resolve(`${name}/package.json`)), file)
  } catch {
    return undefined
  }
}

/** The runtime's binary from node_modules (its package's postinstall copy, else the platform package's). */
export function runtimeBinary(runtime) {
  installRuntimes()
  const candidates = {
    bun: [packageFile('bun', 'bin/bun.exe'), packageFile(`@oven/bun-${process.platform}-${process.arch === 'x64' ? 'x64' : 'aarch64'}`, 'bin/bun')],
    deno: [packageFile('deno', 'deno'), packageFile(`@deno/${process.platform}-${process.arch}-glibc`, 'deno')],
  }[runtime]
  const found = candidates?.find((path) => path && isExecutable(path))
  if (!found) throw new Error(`${runtime} is not installed: ${INSTALL_COMMAND}`)
  return found
}

/** Bundles the entry of `runtime` into node_modules/.cache; returns the file. */
export async function bundleEntry(runtime, outdir = join(ROOT, 'node_modules/.cache/authchart-runtimes')) {
  mkdirSync(outdir, { recursive: true })
  const entry = runtime === 'workerd' ? 'worker' : runtime
  const outfile = join(outdir, `${entry}.mjs`)
  const edge = runtime === 'workerd'
  await build({
    entryPoints: [join(ROOT, 'test/runtimes/entries', `${entry}.ts`)],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    outfile,
    plugins: [fromSources],
    logLevel: 'error',
    ...(edge
      ? // As wrangler bundles a worker; `nodejs_compat` provides node:* modules.
        { platform: 'neutral', mainFields: ['module', 'main'], conditions: ['workerd', 'worker', 'browser'], external: ['node:*'] }
      : {
          platform: 'node',
          external: ['pg-native'],
          // CommonJS dependencies (pg) require Node's modules: give the ESM bundle a require.
          banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
        }),
  })
  return outfile
}

/** A free loopback port. */
export async function freePort() {
  const probe = createServer()
  await new Promise((done) => probe.listen(0, '127.0.0.1', done))
  const { port } = probe.address()
  await new Promise((done) => probe.close(done))
  return port
}

function commandFor(runtime, file) {
  switch (runtime) {
    case 'node':
      return [process.execPath, [file]]
    case 'bun':
      return [runtimeBinary('bun'), ['run', file]]
    case 'deno':
      return [runtimeBinary('deno'), ['run', '--allow-all', '--no-prompt', file]]
    default:
      throw new Error(`no command for ${runtime}`)
  }
}

/**
 * Starts `runtime` serving the bundled entry `file` on `port` with `env`; resolves once it
 * listens (it prints `READY <port>`), with its origin and a stop function.
 */
export async function startRuntime(runtime, { file, port, env, timeoutMs = 30_000 }) {
  const started = performance.now()
  if (runtime === 'workerd') {
    const { Miniflare } = await loadMiniflare()
    const mf = new Miniflare({
      host: '127.0.0.1',
      port,
      // Listed, not discovered: miniflare refuses to follow the variable import() of optional parts.
      modules: [{ type: 'ESModule', path: file }],
      compatibilityDate: '2025-09-01',
      compatibilityFlags: ['nodejs_compat'],
      bindings: env,
      verbose: false,
    })
    const url = await mf.ready
    return { runtime, origin: url.origin, startedMs: performance.now() - started, stop: () => mf.dispose() }
  }
  const [command, args] = commandFor(runtime, file)
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stderr.on('data', (chunk) => (output += chunk))
  await new Promise((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`${runtime} did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs)
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (/READY \d+/.test(output)) {
        clearTimeout(timer)
        ready()
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      fail(new Error(`${runtime} exited (${code}) before listening:\n${output}`))
    })
  })
  return {
    runtime,
    origin: `http://127.0.0.1:${port}`,
    startedMs: performance.now() - started,
    output: () => output,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done()
        child.once('exit', () => done())
        child.kill('SIGTERM')
      }),
  }
}
