/**
 * Global setup of the `apps` test project: packs the package (`npm pack`, which builds it), installs
 * each example app under examples/ from that tarball as a user would (in a work copy under
 * node_modules/.cache/authchart-apps, offline-first from the npm cache), builds it, and starts it
 * on a loopback port, once per run for every test file. An OpenID Provider (oidc-provider) starts
 * with them, with a client registered for each app's OAuth callback.
 *
 * @module
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'

/** A running example app. */
export interface RunningApp {
  origin: string
  port: number
}

/** What the setup provides to the test files (`inject('apps')`). */
export interface AppsContext {
  express: RunningApp
  fastify: RunningApp
  sveltekit: RunningApp
  qwik: RunningApp
  next: RunningApp
  hono: RunningApp
  /** The OpenID Provider's issuer; the apps know it as their `op` provider. */
  opIssuer: string
  /** Milliseconds spent per app on install, build and start, for the report. */
  timings: Record<string, Record<string, number>>
}

declare module 'vitest' {
  export interface ProvidedContext {
    apps: AppsContext
  }
}

/** The client secret of every app at the OP. */
export const OP_CLIENT_SECRET = 'example-app-client-secret-0123456789'
/** The secret of every example app. */
export const APP_SECRET = 'example-app-secret-that-is-long-enough-0123456789'

const root = process.cwd()
const work = join(root, 'node_modules/.cache/authchart-apps')
const ALL_APPS = ['express', 'fastify', 'sveltekit', 'qwik', 'next', 'hono'] as const
type AppName = (typeof ALL_APPS)[number]
// AUTHCHART_APPS=express,qwik prepares only those (while working on one; a full run prepares all).
const APPS = ALL_APPS.filter((app) => !process.env.AUTHCHART_APPS || process.env.AUTHCHART_APPS.split(',').includes(app))

/** How each app starts once built (the arguments of `node`). */
const START: Record<AppName, (port: number) => string[]> = {
  express: () => ['server.js'],
  fastify: () => ['server.js'],
  sveltekit: () => ['build/index.js'],
  qwik: () => ['server/entry.node-server.js'],
  // `next start` as a self-hosted app runs it. Next names its requests after the -H host, so a
  // browser on http://localhost:<port> is on another origin than Next's own request URL (the
  // setting of next-auth #4435 and #10928).
  next: (port) => ['node_modules/next/dist/bin/next', 'start', '-H', '127.0.0.1', '-p', String(port)],
  hono: () => ['server.js'],
}
/** What a fresh build replaces. */
const OUTPUTS: Record<AppName, string[]> = {
  express: [],
  fastify: [],
  sveltekit: ['build', '.svelte-kit'],
  qwik: ['dist', 'server'],
  next: ['.next'],
  hono: [],
}
/** The auth base path of each app, for its OAuth callback at the OP. */
const BASE_PATH: Record<AppName, string> = {
  express: '/auth',
  fastify: '/auth',
  sveltekit: '/auth',
  qwik: '/auth',
  next: '/api/auth',
  hono: '/api/auth',
}
/** No telemetry, no update check: the tests reach nothing outside loopback. */
const QUIET_ENV = { NEXT_TELEMETRY_DISABLED: '1' }

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { output: `${stdout}\n${stderr}` }))
      else resolve(stdout)
    })
  })
}

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

const REGISTRY_FAILURE = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|ENETUNREACH|network|offline/i

/**
 * npm keeps an installed `file:` tarball whose version did not change: forget the previous one so
 * each run tests the package just packed.
 */
function forgetPreviousPackage(dir: string): void {
  rmSync(join(dir, 'node_modules/authchart'), { recursive: true, force: true })
  const lockPath = join(dir, 'package-lock.json')
  try {
    const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as { packages?: Record<string, unknown> }
    delete lock.packages?.['node_modules/authchart']
    writeFileSync(lockPath, JSON.stringify(lock, null, 2))
  } catch {
    // No lockfile yet: the first install writes one.
  }
}

async function install(app: AppName, dir: string): Promise<void> {
  forgetPreviousPackage(dir)
  try {
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir)
  } catch (error) {
    const output = (error as { output?: string }).output ?? String(error)
    if (REGISTRY_FAILURE.test(output)) {
      throw new Error(
        `examples/${app} could not be installed: its dependencies are neither in the npm cache nor reachable ` +
          `on the npm registry. Run the tests once with the registry reachable (CI has it) to fill the cache.\n${output}`,
      )
    }
    throw new Error(`npm install failed for examples/${app}:\n${output}`)
  }
}

/** Copies examples/<app> into the work folder, pointing its `authchart` dependency at the tarball. */
function stage(app: AppName): string {
  const dir = join(work, app)
  mkdirSync(dir, { recursive: true })
  for (const output of OUTPUTS[app]) rmSync(join(dir, output), { recursive: true, force: true })
  cpSync(join(root, 'examples', app), dir, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|build|dist|server|\.svelte-kit|\.next)([/\\]|$)/.test(source.slice(join(root, 'examples', app).length)),
  })
  return dir
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the app exited with ${child.exitCode}:\n${log()}`)
    try {
      await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' })
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`the app did not listen on ${port} within 30 s:\n${log()}`)
}

export default async function setup(project: TestProject) {
  const started = Date.now()
  mkdirSync(work, { recursive: true })
  const timings: Record<string, Record<string, number>> = {}
  // One build per run: the package test skips its own when this variable says dist/ is fresh.
  // Built once per checkout state: rebuilt only when a source changed since the last build.
  await run('node', ['scripts/build-if-stale.mjs'], root)
  process.env.AUTHCHART_DIST_BUILT = String(started)
  const packOutput = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work, '--loglevel=error'], root)
  renameSync(join(work, packOutput.trim().split('\n').pop()!), join(work, 'authchart.tgz'))
  timings.pack = { ms: Date.now() - started }

  const ports = Object.fromEntries(await Promise.all(APPS.map(async (app) => [app, await freePort()] as const))) as Record<AppName, number>
  const op: RunningOidcProvider = await startOidcProvider({
    clients: APPS.map((app) => ({
      client_id: `example-${app}`,
      client_secret: OP_CLIENT_SECRET,
      redirect_uris: [
        `http://127.0.0.1:${ports[app]}${BASE_PATH[app]}/callback/op`,
        `http://localhost:${ports[app]}${BASE_PATH[app]}/callback/op`,
      ],
    })),
  })

  const children: ChildProcess[] = []
  const prepareApp = async (app: AppName): Promise<RunningApp> => {
    const t0 = Date.now()
    const dir = stage(app)
    await install(app, dir)
    const t1 = Date.now()
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }
    if (pkg.scripts?.build) {
      await run('npm', ['run', 'build', '--silent'], dir, { ...process.env, ...QUIET_ENV }).catch((error: { output?: string }) => {
        throw new Error(`building examples/${app} failed:\n${error.output ?? String(error)}`)
      })
    }
    if (pkg.scripts?.check) {
      await run('npm', ['run', 'check', '--silent'], dir).catch((error: { output?: string }) => {
        throw new Error(`type-checking examples/${app} against the packed declarations failed:\n${error.output ?? String(error)}`)
      })
    }
    const t2 = Date.now()
    const port = ports[app]
    const origin = `http://127.0.0.1:${port}`
    let log = ''
    const child = spawn(process.execPath, START[app](port), {
      cwd: dir,
      env: {
        ...process.env,
        ...QUIET_ENV,
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        ORIGIN: origin,
        AUTH_SECRET: APP_SECRET,
        // A production build trusts the Host only when told to (Auth.js's SvelteKit package ignores this).
        AUTH_TRUST_HOST: 'true',
        AUTH_OP_ISSUER: op.issuer,
        AUTH_OP_ID: `example-${app}`,
        AUTH_OP_SECRET: OP_CLIENT_SECRET,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout!.on('data', (chunk) => (log = (log + chunk).slice(-20_000)))
    child.stderr!.on('data', (chunk) => (log = (log + chunk).slice(-20_000)))
    children.push(child)
    await waitForPort(port, child, () => log)
    timings[app] = { install: t1 - t0, build: t2 - t1, start: Date.now() - t2 }
    return { origin, port }
  }

  try {
    const running = Object.fromEntries(await Promise.all(APPS.map(async (app) => [app, await prepareApp(app)] as const)))
    timings.total = { ms: Date.now() - started }
    writeFileSync(join(work, 'timings.json'), JSON.stringify(timings, null, 2))
    project.provide('apps', { ...(running as Record<AppName, RunningApp>), opIssuer: op.issuer, timings })
  } catch (error) {
    for (const child of children) child.kill()
    await op.close()
    throw error
  }

  return async () => {
    for (const child of children) child.kill()
    await op.close()
  }
}

