/**
 * A new user's first hour, from the packed package: a fresh application in a temporary folder
 * outside the repository (so nothing resolves from the checkout's node_modules), `package.json`
 * with `"type": "module"`, `npm install` of the tarball and of the packages README's Install
 * section lists per snippet, and a `tsconfig.json` exactly as `tsc --init` writes it. Every
 * README TypeScript snippet is pasted in as the file name the README gives it, type-checked with
 * TypeScript 5.9 and 7, and run under tsx.
 *
 * The tarball is packed once per run: the apps project's global setup packs it when it runs (it
 * sets AUTHCHART_DIST_BUILT); alone, this file builds into a temporary folder and packs that.
 * Dependencies come from the npm cache first (`--prefer-offline`); the registry is asked only for
 * what the cache lacks.
 */
import { execFile, spawn } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { startRedis, type RedisServer } from '../fixtures/redis.js'
import { SNIPPETS_DIR, snippetNames, TSC_INIT_OPTIONS } from '../readme/snippet.js'

const checkout = process.cwd()
const SECRET = 'fresh-app-secret-that-is-long-enough-0123456789'

/**
 * What an application installs besides `authchart`, per README snippet (README, "Install"). The
 * versions are the checkout's own where it has the package, so the npm cache has them.
 */
const localVersion = (name: string) =>
  (JSON.parse(readFileSync(join(checkout, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
const DEPENDENCIES = ['fastify', '@electric-sql/pglite', 'pg', 'ioredis', 'nodemailer', 'express', 'superstruct', 'xstate']
const DEV_DEPENDENCIES = ['typescript', '@types/node', '@types/pg', '@types/express']
/** Not in the checkout: from the cache if an earlier run put them there, else the registry. */
const EXTRA_DEV_DEPENDENCIES = { tsx: '^4.20.0', typescript7: 'npm:typescript@^7.0.2' }

let app: string
let work: string
let installOutput = ''
let postgres: PostgresServer
let redis: RedisServer

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { output: `${stdout}\n${stderr}` }))
      else resolve(`${stdout}\n${stderr}`)
    })
  })
}

/** The packed package: the apps setup's tarball of this run, or one packed here from a fresh build. */
async function tarball(): Promise<string> {
  const packed = join(checkout, 'node_modules/.cache/authchart-apps/authchart.tgz')
  if (process.env.AUTHCHART_DIST_BUILT && existsSync(packed)) return packed
  // As test/package/package.test.ts: built into a temporary folder, never into the checkout's dist/.
  const root = join(work, 'package')
  mkdirSync(root)
  const tsc = join(checkout, 'node_modules/.bin/tsc')
  await Promise.all(
    ['tsconfig.build.json', 'tsconfig.node.build.json'].map((project) =>
      run(tsc, ['-p', join(checkout, project), '--outDir', join(root, 'dist')], checkout),
    ),
  )
  cpSync(join(checkout, 'integrations/sveltekit/components'), join(root, 'dist/integrations/sveltekit/components'), { recursive: true })
  for (const file of ['package.json', 'README.md', 'LICENSE']) copyFileSync(join(checkout, file), join(root, file))
  const name = (await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work, '--loglevel=error'], root)).trim().split('\n')[0]!
  return join(work, name)
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'authchart-fresh-app-'))
  app = join(work, 'app')
  mkdirSync(app)
  const [packed, pg, rd] = await Promise.all([tarball(), startPostgres(), startRedis()])
  postgres = pg
  redis = rd
  // What `npm install authchart <packages>` and `npm install -D <tools>` write, in one install.
  const manifest = {
    name: 'my-app',
    private: true,
    type: 'module',
    dependencies: { authchart: `file:${packed}`, ...Object.fromEntries(DEPENDENCIES.map((name) => [name, localVersion(name)])) },
    devDependencies: { ...Object.fromEntries(DEV_DEPENDENCIES.map((name) => [name, localVersion(name)])), ...EXTRA_DEV_DEPENDENCIES },
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2))
  installOutput = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app).catch((error: { output?: string }) => {
    throw new Error(`npm install failed in the fresh app:\n${error.output ?? String(error)}`)
  })
  // tsconfig.json as `tsc --init` writes it (5.9 here; 7 in its own folder, compared below).
  await run(join(app, 'node_modules/typescript/bin/tsc'), ['--init'], app)
  mkdirSync(join(app, 'ts7'))
  await run(join(app, 'node_modules/typescript7/bin/tsc'), ['--init'], join(app, 'ts7'))
  for (const name of snippetNames()) copyFileSync(join(SNIPPETS_DIR, name), join(app, name))
  copyFileSync(join(checkout, 'examples/express/server.ts'), join(app, 'express-server.ts'))
}, 600_000)

afterAll(async () => {
  await Promise.all([postgres?.stop(), redis?.stop()])
  if (work) rmSync(work, { recursive: true, force: true })
})

function initOptions(path: string): Record<string, unknown> {
  const { config, error } = ts.readConfigFile(path, ts.sys.readFile)
  expect(error).toBeUndefined()
  return (config as { compilerOptions: Record<string, unknown> }).compilerOptions
}

describe('a fresh app made with tsc --init and the packed package', () => {
  it('installs without an install script of ours (npm warns about none of authchart)', () => {
    expect(installOutput).not.toMatch(/authchart@[^\s]+ \((prepare|preinstall|install|postinstall):/)
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/authchart/package.json'), 'utf8')) as {
      scripts?: Record<string, string>
    }
    for (const script of ['prepare', 'preinstall', 'install', 'postinstall']) expect(manifest.scripts?.[script], script).toBeUndefined()
  })

  it.each([
    ['5.9', 'tsconfig.json'],
    ['7', 'ts7/tsconfig.json'],
  ])('gets from TypeScript %s `tsc --init` the options the README snippet test compiles with', (_version, file) => {
    expect(initOptions(join(app, file))).toEqual(TSC_INIT_OPTIONS)
  })

  it.each([
    ['5.9', 'typescript'],
    ['7', 'typescript7'],
  ])('type-checks every README snippet with TypeScript %s and the tsconfig.json of tsc --init', async (version, pkg) => {
    const { version: installed } = JSON.parse(readFileSync(join(app, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }
    expect(installed.startsWith(`${version}.`)).toBe(true)
    const result = await run(join(app, 'node_modules', pkg, 'bin/tsc'), ['-p', 'tsconfig.json', '--noEmit'], app).catch(
      (error: { output?: string }) => error.output ?? String(error),
    )
    expect(result.split('\n').filter((line) => /error TS\d+/.test(line))).toEqual([])
  }, 180_000)

  describe('runs every README snippet under tsx', () => {
    let results: Record<string, { ok: boolean; error?: string } & Record<string, unknown>>

    beforeAll(async () => {
      copyFileSync(join(checkout, 'test/package/fresh-app/check.mjs'), join(app, 'check.mjs'))
      const output = await run(process.execPath, ['--import', 'tsx', 'check.mjs'], app, {
        ...process.env,
        // Development, as a first run is: in production the snippets trust only the host they list
        // (app.example.com), and these requests come from localhost.
        NODE_ENV: 'development',
        AUTH_SECRET: SECRET,
        AUTH_DATA_DIR: join(work, 'auth-data'),
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: await postgres.createDatabase('fresh_app'),
        REDIS_URL: redis.url,
        AUTH_GITHUB_ID: 'github-client-id',
        AUTH_GITHUB_SECRET: 'github-client-secret',
        AUTH_GOOGLE_ID: 'google-client-id',
        AUTH_GOOGLE_SECRET: 'google-client-secret',
        CORP_ID: 'corp-client-id',
        CORP_SECRET: 'corp-client-secret',
      }).catch((error: { output?: string }) => {
        throw new Error(`check.mjs failed:\n${error.output ?? String(error)}`)
      })
      results = JSON.parse(output.split('\n').find((line) => line.startsWith('{'))!)
    }, 180_000)

    it('runs a check for every snippet of examples/readme', () => {
      expect(Object.keys(results).sort()).toEqual(snippetNames())
    })

    const alice = { user: { name: 'Alice', email: 'alice@example.com' } }

    it.each(['auth.ts', 'database.ts', 'instances-postgres.ts', 'instances-redis.ts'])(
      '%s signs alice in with her password',
      (name) => {
        expect(results[name], results[name]?.error).toMatchObject({ ok: true, status: 302, session: alice })
      },
    )

    it('webhook.ts verifies a signed body and refuses a changed one', () => {
      expect(results['webhook.ts'], results['webhook.ts']?.error).toMatchObject({ ok: true, verified: true, tampered: false })
    })

    it('handler.ts answers auth routes and its own page', () => {
      expect(results['handler.ts'], results['handler.ts']?.error).toMatchObject({
        ok: true,
        providers: ['credentials'],
        home: { session: null },
      })
    })

    it('server.ts listens, serves the sign-in page and its own /', () => {
      expect(results['server.ts'], results['server.ts']?.error).toMatchObject({
        ok: true,
        signInPage: 200,
        contentType: expect.stringContaining('text/html'),
        home: { signedIn: false, signIn: '/auth/signin' },
      })
    })

    it('oauth.ts lists its providers and sends a GitHub sign-in to GitHub with the client id', () => {
      const result = results['oauth.ts']!
      expect(result, result.error).toMatchObject({ ok: true, status: 200, providers: ['github', 'google', 'corp'] })
      const location = new URL(String(result.githubRedirect))
      expect(location.origin + location.pathname).toBe('https://github.com/login/oauth/authorize')
      expect(location.searchParams.get('client_id')).toBe('github-client-id')
    })

    it('email.ts loads with its adapter and lists its providers', () => {
      expect(results['email.ts'], results['email.ts']?.error).toMatchObject({ ok: true, status: 200, providers: ['nodemailer', 'resend'] })
    })

    it('passkeys.ts loads with its adapter and lists the passkey provider', () => {
      expect(results['passkeys.ts'], results['passkeys.ts']?.error).toMatchObject({ ok: true, status: 200, providers: ['passkey'] })
    })

    it('organizations.ts loads with its adapter and refuses a permission to someone signed out', () => {
      expect(results['organizations.ts'], results['organizations.ts']?.error).toMatchObject({
        ok: true,
        status: 200,
        providers: ['credentials'],
        anonymousPay: 403,
      })
    })

    it("extension.ts stops alice's sign-in at the application's step", () => {
      const result = results['extension.ts']!
      expect(result, result.error).toMatchObject({ ok: true, status: 302, session: null })
      expect(String(result.location)).toBe('http://localhost/auth/step/signin-completion')
    })
  })

  it('serves the Express snippet started as README says (tsx)', async () => {
    const port = await freePort()
    const child = spawn(join(app, 'node_modules/.bin/tsx'), ['express-server.ts'], {
      cwd: app,
      env: { ...process.env, NODE_ENV: 'production', AUTH_SECRET: SECRET, AUTH_TRUST_HOST: 'true', PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let log = ''
    child.stdout.on('data', (chunk) => (log += chunk))
    child.stderr.on('data', (chunk) => (log += chunk))
    try {
      let home: Response | undefined
      for (const deadline = Date.now() + 30_000; !home && Date.now() < deadline; ) {
        home = await fetch(`http://127.0.0.1:${port}/`).catch(() => new Promise<undefined>((r) => setTimeout(r, 200)))
      }
      expect(home, log).toBeDefined()
      expect(await home!.text()).toBe('<p id="who">Not signed in</p>')
      const signIn = await fetch(`http://127.0.0.1:${port}/auth/signin`)
      expect(signIn.status).toBe(200)
      expect(await signIn.text()).toContain('name="username"')
      const login = await fetch(`http://127.0.0.1:${port}/protected`, { redirect: 'manual' })
      expect(login.headers.get('location')).toBe('/login')
    } finally {
      child.kill()
    }
  }, 60_000)

  it('runs the CLI with a TypeScript --config under tsx, as it says to on Node 20', async () => {
    const output = await run(
      join(app, 'node_modules/.bin/tsx'),
      ['node_modules/authchart/dist/visualizations/cli.js', 'flows', '--config', './auth.ts'],
      app,
      { ...process.env, AUTH_SECRET: SECRET },
    )
    expect(output).toMatch(/^credentials-signin {2,}Checks credentials/m)
  }, 60_000)

  it('keeps the app outside the checkout, with its own node_modules', () => {
    expect(app.startsWith(checkout)).toBe(false)
    expect(readdirSync(join(app, 'node_modules'))).toContain('authchart')
  })
})
