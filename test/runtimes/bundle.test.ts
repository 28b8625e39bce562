/**
 * Pay for what you use, checked on the bundle: an application's esbuild bundle (from the sources)
 * carries a flow's code and libraries only when it imports a provider of that kind, carries no
 * diagram renderer or rate-limiter index, and imports no bare Node builtin on the edge. A plain-object
 * provider in a bundle fails its configuration with the factory hint instead of a broken route.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build, type Metafile } from 'esbuild'
import { afterAll, describe, expect, it } from 'vitest'
import { fromSources } from './launch.mjs'

const ROOT = process.cwd()
const work = mkdtempSync(join(tmpdir(), 'authchart-bundle-test-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const PROVIDERS = {
  credentials: ["import Credentials from 'authchart/providers/credentials'", "Credentials({ authorize: () => null })"],
  oidc: ["import OIDC from 'authchart/providers/oidc'", "OIDC({ id: 'op', issuer: 'https://op.example', clientId: 'a', clientSecret: 'b' })"],
  github: ["import GitHub from 'authchart/providers/github'", "GitHub({ clientId: 'a', clientSecret: 'b' })"],
  resend: ["import Resend from 'authchart/providers/resend'", "Resend({ apiKey: 'k', from: 'a@example.com' })"],
  passkey: ["import Passkey from 'authchart/providers/passkey'", 'Passkey({})'],
  plainOidc: ['', "{ id: 'op', name: 'OP', type: 'oidc', issuer: 'https://op.example', clientId: 'a', clientSecret: 'b' }"],
} as const

/** An app with `providers`, bundled for the edge (workerd's conditions, node:* left to the runtime). */
async function bundleApp(providers: (keyof typeof PROVIDERS)[], target: 'edge' | 'node' = 'edge') {
  const contents = [
    "import { Auth } from 'authchart'",
    ...providers.map((p) => PROVIDERS[p][0]),
    `const config = { secret: 'a bundle test secret of at least 32 characters', trustHost: true, providers: [${providers.map((p) => PROVIDERS[p][1]).join(', ')}] }`,
    'export default { fetch: (request) => Auth(request, config) }',
  ].join('\n')
  const outfile = join(work, `${target}-${providers.join('-')}.mjs`)
  const { metafile } = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    format: 'esm',
    outfile,
    metafile: true,
    logLevel: 'silent',
    plugins: [fromSources],
    ...(target === 'edge'
      ? { platform: 'neutral', mainFields: ['module', 'main'], conditions: ['workerd', 'worker', 'browser'], external: ['node:*'] }
      : { platform: 'node' }),
  })
  return { outfile, inputs: bundledInputs(metafile) }
}

/** The inputs that contribute code to the output (the metafile also lists dropped dynamic imports). */
function bundledInputs(metafile: Metafile): string[] {
  const [output] = Object.values(metafile.outputs)
  return Object.entries(output!.inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path]) => path)
}

const has = (inputs: string[], pattern: RegExp) => inputs.some((path) => pattern.test(path))
const OAUTH = /node_modules\/oauth4webapi\/|core\/flows\/oauth\.ts$|machines\/oauth-signin/
const EMAIL = /core\/flows\/email\.ts$|machines\/email-signin/
const WEBAUTHN = /@simplewebauthn\/server|asn1js|@peculiar|core\/flows\/webauthn\.ts$|simplewebauthn-browser/

describe('what a bundle carries', () => {
  it('leaves out every flow, the diagram renderer and the rate-limiter index from a credentials-only app', async () => {
    const { inputs } = await bundleApp(['credentials'])
    expect(inputs.filter((path) => OAUTH.test(path) || EMAIL.test(path) || WEBAUTHN.test(path))).toEqual([])
    expect(has(inputs, /@viz-js|visualizations\/render|core\/inspector\/index\.ts$/)).toBe(false)
    expect(has(inputs, /rate-limiter-flexible\/(index|lib\/index)\.js$|RateLimiterCluster|pngjs/)).toBe(false)
    // What it does use is there.
    expect(has(inputs, /core\/flows\/credentials\.ts$/)).toBe(true)
    expect(has(inputs, /rate-limiter-flexible\/lib\/RateLimiterMemory\.js$/)).toBe(true)
  })

  it('brings the OAuth flow with an OAuth or OIDC provider, and nothing of the others', async () => {
    for (const provider of ['oidc', 'github'] as const) {
      const { inputs } = await bundleApp(['credentials', provider])
      expect(has(inputs, OAUTH)).toBe(true)
      expect(has(inputs, EMAIL) || has(inputs, WEBAUTHN)).toBe(false)
    }
  })

  it('brings the e-mail flow with an e-mail provider and WebAuthn with a passkey provider', async () => {
    const email = await bundleApp(['resend'])
    expect(has(email.inputs, EMAIL)).toBe(true)
    expect(has(email.inputs, OAUTH) || has(email.inputs, WEBAUTHN)).toBe(false)
    const passkey = await bundleApp(['passkey'])
    expect(has(passkey.inputs, WEBAUTHN)).toBe(true)
    // A passkey sign-up verifies its address with the e-mail flow's codes: that part may come along.
    expect(has(passkey.inputs, OAUTH)).toBe(false)
  })

  it('needs no bare Node builtin on the edge, whatever the providers', async () => {
    // Without `external` for bare names, an import of 'fs' or 'zlib' would fail the build.
    await expect(bundleApp(['credentials', 'oidc', 'resend', 'passkey'])).resolves.toBeDefined()
  })
})

describe('a bundled app', () => {
  it('runs as an ESM bundle on Node and answers a session read', async () => {
    const { outfile } = await bundleApp(['credentials', 'oidc'], 'node')
    const app = (await import(pathToFileURL(outfile).href)).default as { fetch(request: Request): Promise<Response> }
    const response = await app.fetch(new Request('http://localhost/auth/session'))
    expect(response.status).toBe(200)
    expect(await response.json()).toBeNull()
  })

  it('answers the Configuration error with the factory hint when a plain-object provider cannot load its flow', async () => {
    const { outfile } = await bundleApp(['credentials', 'plainOidc'], 'node')
    const logged: unknown[] = []
    const original = console.error
    console.error = (...args: unknown[]) => void logged.push(...args)
    try {
      const app = (await import(pathToFileURL(outfile).href)).default as { fetch(request: Request): Promise<Response> }
      const response = await app.fetch(new Request('http://localhost/auth/session'))
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({
        message: 'There was a problem with the server configuration. Check the server logs for more information.',
      })
    } finally {
      console.error = original
    }
    expect(logged.map(String).join('\n')).toContain('create the provider with its factory (OAuth(), OIDC(), Email(), WebAuthn())')
  })
})
