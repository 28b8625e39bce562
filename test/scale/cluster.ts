/**
 * Three `Auth` server processes (test/scale/instance.ts, each with its own memory) behind a
 * round-robin HTTP proxy on loopback, for the multi-instance test and `npm run soak`.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { createHash, randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { build } from 'esbuild'
import pg from 'pg'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { PostgresServer } from '../fixtures/postgres.js'

const HERE = fileURLToPath(new URL('.', import.meta.url))
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

let bundled: Promise<string> | undefined
/**
 * test/scale/instance.ts bundled once per test process (esbuild; packages stay imports, resolved
 * from the repository's node_modules): a child then starts in a fraction of the time that
 * transpiling every source it imports takes, which the kill test pays once per instance it kills.
 * The file is named by its contents: processes that build the same code share it.
 */
function instanceScript(): Promise<string> {
  bundled ??= build({
    entryPoints: [`${HERE}instance.ts`],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    outfile: 'instance.mjs',
    logLevel: 'silent',
  }).then(({ outputFiles }) => {
    const code = outputFiles[0]!.contents
    const path = `${HERE}.bundle/instance-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`
    if (!existsSync(path)) {
      mkdirSync(`${HERE}.bundle`, { recursive: true })
      const partial = `${path}.${process.pid}-${randomUUID()}`
      writeFileSync(partial, code)
      renameSync(partial, path)
    }
    return path
  })
  return bundled
}

/** One running instance. */
export interface Instance {
  port: number
  origin: string
  process: ChildProcess
  /** What it printed on stderr (errors it logged). */
  stderr(): string
}

/** Three instances and the proxy in front. */
export interface Cluster {
  /** The proxy's origin: requests go to the instances in turn. */
  origin: string
  instances: Instance[]
  stop(): Promise<void>
}

/** Starts one instance with `env` added to this process's environment. */
export async function startInstance(env: Record<string, string>): Promise<Instance> {
  // --expose-gc: a soak run measures the heap after a full collection.
  const child = spawn(process.execPath, ['--expose-gc', await instanceScript()], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = ''
    child.stdout!.on('data', (chunk) => {
      stdout += chunk
      const found = /listening (\d+)/.exec(stdout)
      if (found) resolve(Number(found[1]))
    })
    child.once('exit', (code) => reject(new Error(`the instance exited (${code}) before listening:\n${stderr}`)))
  })
  return { port, origin: `http://127.0.0.1:${port}`, process: child, stderr: () => stderr }
}

/** A round-robin proxy: each request goes to the next instance, with the client named in X-Forwarded-For. */
function startProxy(instances: Instance[]): Promise<Server> {
  let next = 0
  const server = createServer((req, res) => {
    const target = instances[next++ % instances.length]!
    const forwarded = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-for': String(req.headers['x-forwarded-for'] ?? req.socket.remoteAddress) },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    forwarded.on('error', () => {
      res.statusCode = 502
      res.end()
    })
    req.pipe(forwarded)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

/** Starts three instances with `env` and the proxy in front of them. */
export async function startCluster(env: Record<string, string>, size = 3): Promise<Cluster> {
  const instances = await Promise.all(Array.from({ length: size }, () => startInstance(env)))
  const proxy = await startProxy(instances)
  return {
    origin: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    instances,
    async stop() {
      proxy.closeAllConnections()
      await new Promise((resolve) => proxy.close(resolve))
      await Promise.all(
        instances.map((instance) => {
          if (instance.process.exitCode !== null) return undefined
          const exited = new Promise((resolve) => instance.process.once('exit', resolve))
          instance.process.kill('SIGTERM')
          return exited
        }),
      )
    },
  }
}

/** A browser's cookies and requests against an origin (the proxy or one instance). */
export class HttpBrowser {
  readonly cookies = new Map<string, string>()

  async send(
    origin: string,
    path: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers }
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join('; ')
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded'
    const response = await fetch(`${origin}${path}`, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      redirect: 'manual',
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    })
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(/;\s*/)
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq)
      const gone = attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) <= Date.now()))
      if (gone) this.cookies.delete(name)
      else this.cookies.set(name, decodeURIComponent(pair!.slice(eq + 1)))
    }
    return response
  }

  async csrfToken(origin: string): Promise<string> {
    return ((await (await this.send(origin, '/auth/csrf')).json()) as { csrfToken: string }).csrfToken
  }

  /** A credentials sign-in: the redirect it answers. */
  async signIn(origin: string, username: string, password = 'wonderland'): Promise<Response> {
    const csrfToken = await this.csrfToken(origin)
    return this.send(origin, '/auth/callback/credentials', { form: { csrfToken, username, password } })
  }

  async session(origin: string): Promise<{ user?: { name?: string } } | null> {
    return (await (await this.send(origin, '/auth/session')).json()) as { user?: { name?: string } } | null
  }

  /** A copy with the same cookies (another tab replaying the same state). */
  clone(): HttpBrowser {
    const copy = new HttpBrowser()
    for (const [name, value] of this.cookies) copy.cookies.set(name, value)
    return copy
  }
}

/** A fresh database on `postgres` with the PostgreSQL adapter's tables, for the instances' rows. */
export async function adapterDatabase(postgres: PostgresServer, name: string): Promise<string> {
  const url = await postgres.createDatabase(name)
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await PostgresAdapter(pool).migrate()
  } finally {
    await pool.end()
  }
  return url
}
