/**
 * Pay for what you use, checked on the bundle: an application's esbuild bundle (from the sources)
 * carries a flow's code and libraries only when it imports a provider of that kind, carries no
 * diagram renderer or rate-limiter index, and imports no bare Node builtin on the edge. A plain-object
 * provider (Auth.js's custom-provider form) works bundled: the engine's own loaders reach its flow.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build, type Metafile } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { fromSources } from './launch.mjs'

const ROOT = process.cwd()
const work = mkdtempSync(join(tmpdir(), 'authchart-bundle-test-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const PROVIDERS = {
  credentials: ["import Credentials from 'authchart/providers/credentials'", "Credentials({ authorize: () => null })"],
  oidc: ["import OIDC from 'authchart/providers/oidc'", "OIDC({ id: 'op', issuer: '${ISSUER}', clientId: 'a', clientSecret: 'b' })"],
  github: ["import GitHub from 'authchart/providers/github'", "GitHub({ clientId: 'a', clientSecret: 'b' })"],
  resend: ["import Resend from 'authchart/providers/resend'", "Resend({ apiKey: 'k', from: 'a@example.com' })"],
  passkey: ["import Passkey from 'authchart/providers/passkey'", 'Passkey({})'],
  plainOidc: ['', "{ id: 'op', name: 'OP', type: 'oidc', issuer: '${ISSUER}', clientId: 'a', clientSecret: 'b' }"],
} as const

/** The optional features, each brought in by its import (`core/modules.ts`). */
const FEATURES = {
  secondFactor: ["import { totp } from 'authchart/second-factor'", 'secondFactor: totp()'],
  stepUp: ["import { stepUp } from 'authchart/step-up'", 'stepUp: stepUp()'],
} as const

/**
 * An app with `providers` (and the optional `features` it names), bundled for the edge (workerd's conditions, node:* left to the runtime),
 * with code splitting as Next.js, Vite and webpack bundle: what loads at start is the entry chunk
 * and what it imports statically; a flow's chunk loads on the first request that needs it.
 */
async function bundleApp(
  providers: (keyof typeof PROVIDERS)[],
  target: 'edge' | 'node' = 'edge',
  // A bundle that is only built never reaches its issuer; one that runs is given a live one.
  issuer = 'http://127.0.0.1:9',
  features: (keyof typeof FEATURES)[] = [],
) {
  const contents = [
    "import { Auth } from 'authchart'",
    ...providers.map((p) => PROVIDERS[p][0]),
    ...features.map((f) => FEATURES[f][0]),
    `const config = { secret: 'a bundle test secret of at least 32 characters', trustHost: true, ${features.map((f) => `${FEATURES[f][1]}, `).join('')}providers: [${providers.map((p) => PROVIDERS[p][1]).join(', ')}] }`,
    'export default { fetch: (request) => Auth(request, config) }',
  ]
    .join('\n')
    .replaceAll('${ISSUER}', issuer)
  const outdir = join(work, `${target}-${[...providers, ...features].join('-')}`)
  const { metafile } = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'js', sourcefile: 'app.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    outdir,
    entryNames: 'app',
    outExtension: { '.js': '.mjs' },
    metafile: true,
    logLevel: 'silent',
    plugins: [fromSources],
    ...(target === 'edge'
      ? { platform: 'neutral', mainFields: ['module', 'main'], conditions: ['workerd', 'worker', 'browser'], external: ['node:*'] }
      : { platform: 'node' }),
  })
  return { outfile: join(outdir, 'app.mjs'), atStart: startInputs(metafile), inChunks: allInputs(metafile) }
}

const contributed = (output: Metafile['outputs'][string]) =>
  Object.entries(output.inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path]) => path)

/** The inputs of the entry chunk and of the chunks it imports statically: what loads at start. */
function startInputs(metafile: Metafile): string[] {
  // The app's own entry: every import() target is an entry point of its own in the metafile too.
  const entry = Object.keys(metafile.outputs).find((path) => /(^|\/)app\.mjs$/.test(path))!
  const seen = new Set<string>()
  const visit = (path: string) => {
    if (seen.has(path)) return
    seen.add(path)
    for (const imported of metafile.outputs[path]!.imports) {
      if (imported.kind === 'import-statement' && metafile.outputs[imported.path]) visit(imported.path)
    }
  }
  visit(entry)
  return [...seen].flatMap((path) => contributed(metafile.outputs[path]!))
}

/** The inputs of every chunk: what a request may load later. */
function allInputs(metafile: Metafile): string[] {
  return Object.values(metafile.outputs).flatMap(contributed)
}

const has = (inputs: string[], pattern: RegExp) => inputs.some((path) => pattern.test(path))
const OAUTH = /node_modules\/oauth4webapi\/|core\/flows\/oauth\/flow\.ts$|machines\/oauth-signin/
const EMAIL = /core\/flows\/email\/flow\.ts$|machines\/email-signin/
const WEBAUTHN = /@simplewebauthn\/server|asn1js|@peculiar|core\/flows\/webauthn\/flow\.ts$|simplewebauthn-browser/

describe('what a bundle carries', () => {
  it('starts a credentials-only app without any other flow, the diagram renderer or the rate-limiter index', async () => {
    const { atStart, inChunks } = await bundleApp(['credentials'])
    expect(atStart.filter((path) => OAUTH.test(path) || EMAIL.test(path) || WEBAUTHN.test(path))).toEqual([])
    expect(has(inChunks, /@viz-js|visualizations\/render|core\/inspector\/index\.ts$/)).toBe(false)
    expect(has(inChunks, /rate-limiter-flexible\/(index|lib\/index)\.js$|RateLimiterCluster|pngjs/)).toBe(false)
    // The WebAuthn library comes only with a passkey provider, even in a chunk loaded later.
    expect(has(inChunks, /@simplewebauthn\/server|asn1js|@peculiar/)).toBe(false)
    // What it does use is there.
    expect(has(atStart, /core\/flows\/credentials\/flow\.ts$/)).toBe(true)
    // The limiter is CommonJS, loaded at the first attempt counted: a session read counts nothing.
    expect(has(inChunks, /rate-limiter-flexible\/lib\/RateLimiterMemory\.js$/)).toBe(true)
    expect(has(atStart, /rate-limiter-flexible\/lib\/RateLimiterMemory\.js$/)).toBe(false)
  })

  it('links no second factor without its import, and with it loads otpauth and the QR encoder only when a code is checked or enrolled', async () => {
    const lean = await bundleApp(['credentials'])
    expect(has(lean.inChunks, /node_modules\/otpauth\/|node_modules\/qrcode\/|core\/second-factor\/(index|totp)\.ts$|core\/flows\/totp-enrolment\//)).toBe(false)
    // Whether a user has a second factor is still asked (the completion refuses a stored one).
    expect(has(lean.atStart, /core\/second-factor\/stored\.ts$/)).toBe(true)

    const { atStart, inChunks } = await bundleApp(['credentials'], 'edge', undefined, ['secondFactor'])
    // Whether a user has a second factor is known at run time only: the code is bundled, in chunks
    // a cold start does not load.
    expect(has(atStart, /node_modules\/otpauth\/|node_modules\/qrcode\/|core\/second-factor\/totp\.ts$/)).toBe(false)
    expect(has(inChunks, /node_modules\/otpauth\//)).toBe(true)
    expect(has(inChunks, /node_modules\/qrcode\/lib\/renderer\/svg-tag\.js$/)).toBe(true)
    // The code check itself (counts, backup codes) comes with the module's value.
    expect(has(atStart, /core\/second-factor\/index\.ts$/)).toBe(true)
  })

  it('links the re-authentication only with stepUp()', async () => {
    const REAUTHENTICATION = /core\/flows\/reauthenticate\/(chart|index|page|federated|demand|resume)\.ts$/
    expect(has((await bundleApp(['credentials'])).inChunks, REAUTHENTICATION)).toBe(false)
    expect(has((await bundleApp(['credentials'], 'edge', undefined, ['stepUp'])).inChunks, REAUTHENTICATION)).toBe(true)
  })

  it('brings the OAuth flow with an OAuth or OIDC provider, factory-made or a plain object (in a chunk of its own)', async () => {
    for (const provider of ['oidc', 'github', 'plainOidc'] as const) {
      const { atStart, inChunks } = await bundleApp(['credentials', provider])
      expect(has(inChunks, OAUTH)).toBe(true)
      if (provider === 'plainOidc') expect(has(atStart, OAUTH)).toBe(false)
      expect(has(inChunks, /@simplewebauthn\/server|asn1js|@peculiar/)).toBe(false)
    }
  })

  it('keeps the e-mail flow and WebAuthn in chunks of their own', async () => {
    const email = await bundleApp(['resend'])
    expect(has(email.inChunks, EMAIL)).toBe(true)
    expect(has(email.atStart, EMAIL) || has(email.atStart, WEBAUTHN)).toBe(false)
    const passkey = await bundleApp(['passkey'])
    expect(has(passkey.inChunks, /@simplewebauthn\/server/)).toBe(true)
    expect(has(passkey.atStart, /@simplewebauthn\/server|asn1js|@peculiar/)).toBe(false)
  })

  it('needs no bare Node builtin on the edge, whatever the providers', async () => {
    // Without `external` for bare names, an import of 'fs' or 'zlib' would fail the build.
    await expect(bundleApp(['credentials', 'oidc', 'resend', 'passkey'])).resolves.toBeDefined()
  })
})

describe('a bundled app', () => {
  let op: RunningOidcProvider
  beforeAll(async () => {
    op = await startOidcProvider({ clients: [{ client_id: 'a', client_secret: 'b', redirect_uris: ['http://localhost/auth/callback/op'] }] })
  })
  afterAll(() => op?.close())

  it('runs as an ESM bundle on Node and answers a session read', async () => {
    const { outfile } = await bundleApp(['credentials', 'oidc'], 'node')
    const app = (await import(pathToFileURL(outfile).href)).default as { fetch(request: Request): Promise<Response> }
    const response = await app.fetch(new Request('http://localhost/auth/session'))
    expect(response.status).toBe(200)
    expect(await response.json()).toBeNull()
  })

  it("signs in through a plain-object OIDC provider (Auth.js's custom-provider form) from a bundle", async () => {
    const { outfile } = await bundleApp(['credentials', 'plainOidc'], 'node', op.issuer)
    const app = (await import(pathToFileURL(outfile).href)).default as { fetch(request: Request): Promise<Response> }
    const providers = await app.fetch(new Request('http://localhost/auth/providers'))
    expect(Object.keys(await providers.json())).toEqual(['credentials', 'op'])
    // The OAuth flow loads and runs: discovery at the provider, then the redirect to it.
    const csrf = await app.fetch(new Request('http://localhost/auth/csrf'))
    const { csrfToken } = (await csrf.json()) as { csrfToken: string }
    const cookie = csrf.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
    const response = await app.fetch(
      new Request('http://localhost/auth/signin/op', {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrfToken }),
      }),
    )
    expect(response.status).toBe(302)
    const location = new URL(response.headers.get('location')!)
    expect(`${location.origin}${location.pathname}`).toBe(`${op.issuer}/auth`)
    expect(location.searchParams.get('client_id')).toBe('a')
    expect(location.searchParams.get('redirect_uri')).toBe('http://localhost/auth/callback/op')
  })
})
