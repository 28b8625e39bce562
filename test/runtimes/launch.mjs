// Starts the runtime matrix's app on Node, Bun, Deno and workerd: each entry under ./entries is
// bundled from the sources with esbuild (the package names mapped to the sources, as the vitest
// aliases do), then run by the runtime installed from npm (devDependencies `bun`, `deno`,
// `miniflare`, which brings `workerd`). A runtime that is not installed fails with the command that
// installs it. Plain JavaScript, so that `npm run bench` starts the same runtimes.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { fromSources } from '../../scripts/from-sources.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const require = createRequire(join(ROOT, 'package.json'))

/** The runtimes of the matrix. */
export const RUNTIMES = ['node', 'bun', 'deno', 'workerd']

/** The install command for each runtime, in the error when it is missing. */
const INSTALL = {
  bun: 'npm install --save-dev bun (npm ci installs it from package.json)',
  deno: 'npm install --save-dev deno (npm ci installs it from package.json)',
  workerd: 'npm install --save-dev miniflare@4.20260426.0 (npm ci installs it from package.json; later versions need Node 22)',
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
  const candidates = {
    bun: [packageFile('bun', 'bin/bun.exe'), packageFile(`@oven/bun-${process.platform}-${process.arch === 'x64' ? 'x64' : 'aarch64'}`, 'bin/bun')],
    deno: [packageFile('deno', 'deno'), packageFile(`@deno/${process.platform}-${process.arch}-glibc`, 'deno')],
  }[runtime]
  const found = candidates?.find((path) => path && isExecutable(path))
  if (!found) throw new Error(`${runtime} is not installed: ${INSTALL[runtime]}`)
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
    let Miniflare
    try {
      ;({ Miniflare } = await import('miniflare'))
    } catch (error) {
      throw new Error(`workerd is not installed: ${INSTALL.workerd}`, { cause: error })
    }
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
