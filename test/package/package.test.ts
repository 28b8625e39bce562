/**
 * The published package: the build emits JavaScript and declarations to dist/, publint finds
 * nothing wrong, and plain `node` (no bundler, no TypeScript) imports every subpath by name.
 *
 * The package is built into a temporary folder (its package.json, README, LICENSE, the build's
 * dist/, and a link to the checkout's node_modules), never into the checkout's own dist/: other
 * test files and tools may be reading that while this one runs.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { typeScriptLoading } from '../../visualizations/typescript-loading.js'

const checkout = process.cwd()
const root = mkdtempSync(join(tmpdir(), 'authchart-package-'))
const pkg = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string; default?: string; svelte?: string }>
  scripts: Record<string, string>
}

function node(script: string): string {
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  })
}

beforeAll(() => {
  if (process.env.AUTHCHART_DIST_BUILT) {
    // The apps project's global setup built (and packed) the checkout's dist/ in this run already:
    // copy it, reading only.
    cpSync(join(checkout, 'dist'), join(root, 'dist'), { recursive: true })
  } else {
    // The build script's steps, with dist/ redirected; the script itself must not drift.
    expect(pkg.scripts.build).toBe(
      'npm run charts:check && rm -rf dist && tsc -p tsconfig.build.json --emitDeclarationOnly && tsc -p tsconfig.node.build.json --emitDeclarationOnly && node scripts/build-dist.mjs && cp -R integrations/sveltekit/components dist/integrations/sveltekit/ && node -e "require(\'fs\').writeFileSync(\'dist/.built-at\', new Date().toISOString())"',
    )
    // (The last step stamps the build for `npm run demo`'s staleness check; it is not shipped.)
    // The compiled charts are checked first: a stale table must not ship (test/core/charts-drift.test.ts runs the check).
    const tsc = join(checkout, 'node_modules/.bin/tsc')
    for (const project of ['tsconfig.build.json', 'tsconfig.node.build.json']) {
      execFileSync(tsc, ['-p', join(checkout, project), '--emitDeclarationOnly', '--outDir', join(root, 'dist')], { cwd: checkout, stdio: 'pipe' })
    }
    execFileSync(process.execPath, [join(checkout, 'scripts/build-dist.mjs'), '--outdir', join(root, 'dist')], { cwd: checkout, stdio: 'pipe' })
    cpSync(join(checkout, 'integrations/sveltekit/components'), join(root, 'dist/integrations/sveltekit/components'), {
      recursive: true,
    })
  }
  for (const file of ['package.json', 'README.md', 'LICENSE']) copyFileSync(join(checkout, file), join(root, file))
  copyFileSync(join(checkout, 'test/fixtures/extended-flows.mjs'), join(root, 'extended-flows.mjs'))
  symlinkSync(join(checkout, 'node_modules'), join(root, 'node_modules'), 'dir')
}, 120_000)

afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('the package', () => {
  it('points every export at a built file and its declarations', () => {
    const wildcardExample: Record<string, string> = { './providers/*': 'credentials', './adapters/*': 'memory', './stores/*': 'postgres', './extensions/*': 'terms' }
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue
      const example = wildcardExample[subpath] ?? ''
      expect(!subpath.includes('*') || example !== '', `an example module for ${subpath}`).toBe(true)
      const entry = target.default ?? target.svelte!
      const files = [entry.replace('*', example), target.types.replace('*', example)]
      for (const file of files) expect(existsSync(join(root, file)), `${subpath} → ${file}`).toBe(true)
    }
  })

  it('ships a LICENSE whose text is the licence package.json names', () => {
    const { license } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string }
    expect(license).toBe('ISC')
    const text = readFileSync(join(root, 'LICENSE'), 'utf8')
    expect(text.split('\n')[0]).toBe('ISC License')
    expect(text).toMatch(/^Copyright \(c\) \d{4}, .+$/m)
    expect(text).toContain('Permission to use, copy, modify, and/or distribute this software for any')
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: 'pipe' }),
    ) as [{ files: { path: string }[] }]
    expect(packed.files.map((f) => f.path)).toContain('LICENSE')
  })

  it('passes publint --strict', () => {
    const output = execFileSync(join(checkout, 'node_modules/.bin/publint'), ['--strict', root], { cwd: root, encoding: 'utf8' })
    expect(output).toContain('All good!')
  })

  it('resolves every subpath for ESM consumers and bundlers (attw --profile esm-only)', () => {
    // ESM only, as README says: node10 and CommonJS resolutions are out of the profile.
    // Packed here without scripts: `prepack` would rebuild from sources this folder does not have.
    const [{ filename }] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmpdir()], { cwd: root, encoding: 'utf8', stdio: 'pipe' }),
    ) as [{ filename: string }]
    const tarball = join(tmpdir(), filename)
    let output: string
    try {
      output = execFileSync(join(checkout, 'node_modules/.bin/attw'), [tarball, '--profile', 'esm-only', '--format', 'json'], { cwd: root, encoding: 'utf8' })
    } finally {
      rmSync(tarball, { force: true })
    }
    const report = JSON.parse(output) as { analysis: { problems: unknown[] }; problems?: unknown[] }
    expect(report.analysis.problems.filter((p) => !['node10', 'node16-cjs'].includes((p as { resolutionKind?: string }).resolutionKind ?? ''))).toEqual([])
  }, 240_000)

  it('is importable by plain node under its own name, subpath by subpath', () => {
    const names = JSON.parse(
      node(`
        const modules = {
          root: await import('authchart'),
          jwt: await import('authchart/jwt'),
          errors: await import('authchart/errors'),
          adapters: await import('authchart/adapters'),
          memory: await import('authchart/adapters/memory'),
          postgres: await import('authchart/adapters/postgres'),
          postgresStore: await import('authchart/stores/postgres'),
          redisStore: await import('authchart/stores/redis'),
          machines: await import('authchart/machines'),
          credentials: await import('authchart/providers/credentials'),
          oauth: await import('authchart/providers/oauth'),
          oidc: await import('authchart/providers/oidc'),
          github: await import('authchart/providers/github'),
          google: await import('authchart/providers/google'),
          twitter: await import('authchart/providers/twitter'),
          vk: await import('authchart/providers/vk'),
          email: await import('authchart/providers/email'),
          nodemailer: await import('authchart/providers/nodemailer'),
          resend: await import('authchart/providers/resend'),
          sendgrid: await import('authchart/providers/sendgrid'),
          postmark: await import('authchart/providers/postmark'),
          mailgun: await import('authchart/providers/mailgun'),
          forwardemail: await import('authchart/providers/forwardemail'),
          fastify: await import('authchart/fastify'),
          terms: await import('authchart/extensions/terms'),
          extensions: await import('authchart/extensions'),
          testing: await import('authchart/testing'),
          express: await import('authchart/express'),
          sveltekitClient: await import('authchart/sveltekit/client'),
          next: await import('authchart/next'),
          nextReact: await import('authchart/next/react'),
          hono: await import('authchart/hono'),
        }
        console.log(JSON.stringify(Object.fromEntries(Object.entries(modules).map(([k, m]) => [k, Object.keys(m).sort()]))))
      `),
    ) as Record<string, string[]>
    expect(names.root).toEqual(
      expect.arrayContaining(['Auth', 'createActionURL', 'setEnvDefaults', 'isAuthAction', 'skipCSRFCheck', 'raw', 'customFetch']),
    )
    expect(names.jwt).toEqual(expect.arrayContaining(['encode', 'decode', 'getToken']))
    expect(names.errors).toEqual(expect.arrayContaining(['AuthError', 'CredentialsSignin', 'AccessDenied', 'MissingCSRF']))
    expect(names.adapters).toEqual(['isDate'])
    expect(names.memory).toEqual(expect.arrayContaining(['MemoryAdapter', 'createMemoryStore']))
    expect(names.postgres).toEqual(expect.arrayContaining(['PostgresAdapter', 'schema']))
    expect(names.postgresStore).toEqual(['postgresAuthStore'])
    expect(names.redisStore).toEqual(['redisAuthStore'])
    expect(names.machines).toEqual(
      expect.arrayContaining(['sessionMachine', 'credentialsSignInMachine', 'oauthSignInMachine']),
    )
    expect(names.root).toEqual(expect.arrayContaining(['CONTINUE', 'DENY', 'memoryAuthStore', 'stepForm']))
    // defineExtension brings the extended completion's composer: it is authchart/extensions' alone.
    expect(names.root).not.toContain('defineExtension')
    expect(names.extensions).toEqual(expect.arrayContaining(['defineExtension', 'CONTINUE', 'DENY', 'runs', 'waitsFor', 'stepForm']))
    expect(names.terms).toEqual(['termsExtension'])
    expect(names.testing).toEqual(expect.arrayContaining(['describeFlowModel', 'flowMachine', 'modelPaths', 'drivePath', 'coverage']))
    expect(names.credentials).toEqual(['default'])
    expect(names.machines).toContain('emailSignInMachine')
    for (const provider of [
      'oauth', 'oidc', 'github', 'google', 'twitter', 'vk',
      'email', 'nodemailer', 'resend', 'sendgrid', 'postmark', 'mailgun', 'forwardemail',
    ]) {
      expect(names[provider], provider).toContain('default')
    }
    expect(names.fastify).toEqual(expect.arrayContaining(['fastifyAuth', 'getSession', 'requireSession']))
    expect(names.express).toEqual(['ExpressAuth', 'getSession', 'requireRecentAuth'])
    expect(names.sveltekitClient).toEqual(['signIn', 'signOut'])
    // The Next.js and Hono peers are installed here (dev dependencies), as in an app that uses them.
    expect(names.next).toEqual(['AuthError', 'CredentialsSignin', 'customFetch', 'default'])
    expect(names.nextReact).toEqual(
      expect.arrayContaining(['SessionProvider', 'useSession', 'signIn', 'signOut', 'getSession', 'getCsrfToken', 'getProviders']),
    )
    expect(names.hono).toEqual(['authHandler', 'getAuthUser', 'initAuthConfig', 'requireRecentAuth', 'setEnvDefaults', 'verifyAuth'])
  })

  it.each([
    ['authchart/sveltekit', '@sveltejs/kit'],
    ['authchart/qwik', '@builder.io/qwik'],
  ])('resolves %s up to its framework peer, which only the app installs', (subpath, peer) => {
    // Everything of ours resolves and loads; the first missing module is the framework itself.
    // test/apps/ imports these in real SvelteKit and Qwik apps installed from the packed package.
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', `await import('${subpath}')`], {
      cwd: root,
      encoding: 'utf8',
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(`Cannot find package '${peer}'`)
  })

  it.each([
    ['authchart/next', 'next'],
    ['authchart/next/react', 'react'],
    ['authchart/hono', 'hono'],
  ])('imports %s up to its framework peer when the app has not installed it (as next-auth and @hono/auth-js)', (subpath, peer) => {
    // The peers are installed here: a resolve hook makes this one missing, as in an app without it.
    const hook = `data:text/javascript,${encodeURIComponent(
      `export async function resolve(s, c, next) { if (s === ${JSON.stringify(peer)} || s.startsWith(${JSON.stringify(`${peer}/`)})) { const e = new Error("Cannot find package '${peer}'"); e.code = "ERR_MODULE_NOT_FOUND"; throw e } return next(s, c) }`,
    )}`
    const script = `import { register } from 'node:module'\nregister(${JSON.stringify(hook)})\nawait import('${subpath}')`
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(`Cannot find package '${peer}'`)
  })

  it.each([
    ['authchart/fastify', 'fastify'],
    ['authchart/express', 'express'],
  ])('imports %s without its framework installed (it needs only the framework types)', (subpath, peer) => {
    const hook = `data:text/javascript,${encodeURIComponent(
      `export async function resolve(s, c, next) { if (s === ${JSON.stringify(peer)} || s.startsWith(${JSON.stringify(`${peer}/`)})) { const e = new Error("Cannot find package '${peer}'"); e.code = "ERR_MODULE_NOT_FOUND"; throw e } return next(s, c) }`,
    )}`
    const script = `import { register } from 'node:module'\nregister(${JSON.stringify(hook)})\nconst m = await import('${subpath}')\nconsole.log(Object.keys(m).length)`
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })
    expect(result.status, result.stderr).toBe(0)
    expect(Number(result.stdout)).toBeGreaterThan(0)
  })

  it('ships the Svelte components as source for the app to compile, and the Qwik entry for its optimizer', () => {
    const components = 'dist/integrations/sveltekit/components'
    for (const file of ['index.js', 'index.d.ts', 'SignIn.svelte', 'SignOut.svelte']) {
      expect(existsSync(join(root, components, file)), file).toBe(true)
    }
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { qwik: string }
    expect(manifest.qwik).toBe('./dist/integrations/qwik/index.qwik.js')
    expect(readFileSync(join(root, manifest.qwik), 'utf8')).toContain("inlinedQrl")
  })

  it('imports the nodemailer provider without Nodemailer installed, and says how to install it on send', () => {
    // A resolve hook that makes `nodemailer` missing, as in an application that never installed it.
    const hook = `data:text/javascript,${encodeURIComponent(
      'export async function resolve(s, c, next) { if (s === "nodemailer") { const e = new Error("Cannot find package nodemailer"); e.code = "ERR_MODULE_NOT_FOUND"; throw e } return next(s, c) }',
    )}`
    const output = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
        import { register } from 'node:module'
        register(${JSON.stringify(hook)})
        const { default: Nodemailer } = await import('authchart/providers/nodemailer')
        const provider = Nodemailer({ server: 'smtp://127.0.0.1:1' })
        try {
          await provider.sendVerificationRequest({ identifier: 'a@b.c', url: 'http://localhost/x', token: 't', expires: new Date(), provider, theme: {} })
        } catch (error) {
          console.log(provider.id, error.message)
        }
      `,
      ],
      { cwd: root, encoding: 'utf8' },
    )
    expect(output.trim()).toBe('nodemailer The nodemailer provider needs Nodemailer: npm install nodemailer')
  })

  it('imports every provider subpath by name, each a factory that works uncalled', () => {
    const files = readdirSync(join(checkout, 'providers'))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => file.slice(0, -'.ts'.length))
    const ids = JSON.parse(
      node(`
        const ids = {}
        for (const file of ${JSON.stringify(files)}) {
          const { default: factory } = await import('authchart/providers/' + file)
          try {
            ids[file] = typeof factory === 'function' && file !== 'credentials' ? (factory() ?? {}).id ?? null : 'n/a'
          } catch (error) {
            ids[file] = 'throws: ' + error.message
          }
        }
        console.log(JSON.stringify(ids))
      `),
    ) as Record<string, string | null>
    expect(Object.keys(ids)).toHaveLength(files.length)
    // As in Auth.js, these cannot be built without a way to send: a sender or an SMTP server.
    const needOptions: Record<string, string> = {
      email: 'throws: Email requires a `sendVerificationRequest` function or a `server` configuration',
      nodemailer: 'throws: Nodemailer requires a `server` configuration',
    }
    for (const file of files) {
      if (file === 'credentials' || file === 'oauth' || file === 'oidc') continue
      expect(ids[file], file).toBe(needOptions[file] ?? file)
    }
  })

  it('signs in and reads the session through the built package', () => {
    const output = node(`
      import { Auth } from 'authchart'
      import Credentials from 'authchart/providers/credentials'
      const config = {
        secret: 'a-secret-that-is-long-enough-for-the-schema-000',
        trustHost: true,
        providers: [Credentials({ authorize: () => ({ id: '1', name: 'Node' }) })],
      }
      const origin = 'http://localhost'
      const csrf = await Auth(new Request(origin + '/auth/csrf'), config)
      const cookie = csrf.headers.getSetCookie()[0].split(';')[0]
      const { csrfToken } = await csrf.json()
      const signIn = await Auth(new Request(origin + '/auth/callback/credentials', {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrfToken }),
      }), config)
      const session = signIn.headers.getSetCookie().find((c) => c.startsWith('authjs.session-token=')).split(';')[0]
      const read = await Auth(new Request(origin + '/auth/session', { headers: { cookie: session } }), config)
      console.log((await read.json()).user.name)
    `)
    expect(output.trim()).toBe('Node')
  })
})

describe('the authchart command line', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [join(root, 'dist/visualizations/cli.js'), ...args], { cwd: root, encoding: 'utf8' })

  it('is the package bin, an executable node script', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> }
    expect(pkg.bin.authchart).toBe('./dist/visualizations/cli.js')
    expect(readFileSync(join(root, pkg.bin.authchart!), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/)
  })

  it('prints a fresh secret that the config accepts, alone on stdout', () => {
    const first = cli('secret')
    const second = cli('secret')
    expect(first.status).toBe(0)
    expect(first.stdout).toMatch(/^[A-Za-z0-9_-]{43}\n$/)
    expect(second.stdout).not.toBe(first.stdout)
    expect(first.stderr).toContain('AUTH_SECRET')
    const output = node(`
      import { Auth } from 'authchart'
      import Credentials from 'authchart/providers/credentials'
      const config = { secret: ${JSON.stringify(first.stdout.trim())}, trustHost: true, providers: [Credentials({ authorize: () => null })] }
      console.log((await Auth(new Request('http://localhost/auth/csrf'), config)).status)
    `)
    expect(output.trim()).toBe('200')
  })

  it('lists the built-in flows, each with what it does', () => {
    const lines = cli('flows').stdout.trim().split('\n')
    expect(lines.map((line) => line.split(/\s+/)[0])).toEqual([
      'session',
      'credentials-signin',
      'oauth-signin',
      'email-signin',
      'webauthn-signin',
      'password-signin',
      'password-signup',
      'password-reset',
      'password-change',
      'signin-completion',
      'totp-enrolment',
      'logout',
      'reauthenticate',
      'organization-invitation',
      'device-authorization',
      'organization-membership',
    ])
    expect(lines[2]).toMatch(/^oauth-signin {2,}Signs a user in through an OAuth 2 \/ OpenID Connect provider\.$/)
    for (const line of lines) expect(line).toMatch(/^[a-z-]+ {2,}[A-Z].{20,}\.$/)
  })

  it('prints a help with a line per command, and exits 0', () => {
    const result = cli('--help')
    expect(result.status).toBe(0)
    for (const command of ['secret', 'flows', 'diagram <flow>']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command} +[A-Z].+$`, 'm'))
    }
    expect(result.stdout).toMatch(/^ {2}--config <module> +.+$/m)
    expect(cli('help').stdout).toBe(result.stdout)
  })

  it('answers no command or an unknown one with the help on stderr and exit 1', () => {
    const none = cli()
    expect(none.status).toBe(1)
    expect(none.stderr).toContain('Commands:')
    const unknown = cli('draw')
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toContain('Unknown command "draw".')
  })

  it('loads a TypeScript --config on Node >= 22.6 (type stripping); on older Node says to run it under tsx', () => {
    writeFileSync(join(root, 'auth.ts'), "import type { AuthConfig } from 'authchart'\nexport const extensions: NonNullable<AuthConfig['extensions']> = []\n")
    const result = cli('flows', '--config', './auth.ts')
    if (typeScriptLoading(process.version, process.features as { typescript?: unknown }) === 'unsupported') {
      expect(result.status).toBe(1)
      expect(result.stderr).toContain(`./auth.ts is TypeScript, which Node ${process.version} cannot load (Node >= 22.6 can).`)
      expect(result.stderr).toContain('npx tsx node_modules/authchart/dist/visualizations/cli.js flows --config ./auth.ts')
    } else {
      expect(result.stderr).toBe('')
      expect(result.status).toBe(0)
      expect(result.stdout).toMatch(/^signin-completion {2,}/m)
    }
  })

  it.each([
    ['mermaid', 'mmd'],
    ['svg', 'svg'],
    ['json', 'json'],
  ])('prints a flow as %s, identical to the committed diagram', (format, extension) => {
    const result = cli('diagram', 'oauth-signin', '--format', format)
    expect(result.status).toBe(0)
    expect(result.stdout).toBe(readFileSync(join(checkout, `visualizations/out/oauth-signin.${extension}`), 'utf8'))
  })

  it('draws a flow as extended by the application (--config)', () => {
    const result = cli('diagram', 'signin-completion', '--format', 'mermaid', '--config', 'extended-flows.mjs')
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('title: signin-completion (v6+terms@1)')
    expect(result.stdout).toContain('checkingSecondFactor --> checkingTerms : findSecondFactor.done')
    expect(result.stdout).toContain('awaitingTerms --> denied : terms.decline')
  })

  it('names the known flows when asked for an unknown one', () => {
    const result = cli('diagram', 'nope')
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      'Unknown flow "nope". Known flows: session, credentials-signin, oauth-signin, email-signin, webauthn-signin, password-signin, password-signup, password-reset, password-change, signin-completion, totp-enrolment',
    )
  })
})
