// What an application pays to bundle authchart next to @auth/core: each configuration (credentials
// only; + OIDC; + e-mail; + passkeys) as a fetch-handler module, bundled with esbuild and minified,
// for the edge (workerd's conditions, `node:*` left to the runtime as with `nodejs_compat`) and as
// an ESM bundle for Node (the Lambda shape), which must also start.
//
//   node scripts/bundle.mjs                 # the table, minified and gzipped, both libraries
//   node scripts/bundle.mjs --top 12        # and each bundle's largest inputs (esbuild metafile)
//
// The table is of single-file bundles (every `import()` inlined, as wrangler and an esbuild Lambda
// build emit them); below it, the split-chunk shape of the credentials-only configuration.
//   node scripts/bundle.mjs --json
//   node scripts/bundle.mjs --out <dir>     # keep the bundles (default: a temporary folder)
//
// It bundles the built package (`dist/`, through the exports map): run `npm run build` first.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** The configurations, each adding to the one before, as Auth.js's docs write them. */
export const CONFIGURATIONS = ['credentials', 'oidc', 'email', 'passkey']

/** A Map-backed adapter, the same application code in both libraries' bundles. */
const ADAPTER = `
const rows = { users: new Map(), accounts: new Map(), tokens: new Map(), authenticators: new Map() }
export const adapter = {
  createUser: async (user) => { const row = { ...user, id: crypto.randomUUID() }; rows.users.set(row.id, row); return row },
  getUser: async (id) => rows.users.get(id) ?? null,
  getUserByEmail: async (email) => [...rows.users.values()].find((u) => u.email === email) ?? null,
  getUserByAccount: async ({ provider, providerAccountId }) => rows.users.get(rows.accounts.get(provider + ':' + providerAccountId)?.userId) ?? null,
  updateUser: async (user) => { const row = { ...rows.users.get(user.id), ...user }; rows.users.set(row.id, row); return row },
  linkAccount: async (account) => { rows.accounts.set(account.provider + ':' + account.providerAccountId, account); return account },
  createVerificationToken: async (token) => { rows.tokens.set(token.identifier + ':' + token.token, token); return token },
  useVerificationToken: async ({ identifier, token }) => { const key = identifier + ':' + token; const row = rows.tokens.get(key) ?? null; rows.tokens.delete(key); return row },
  getAccount: async (providerAccountId, provider) => rows.accounts.get(provider + ':' + providerAccountId) ?? null,
  createAuthenticator: async (a) => { rows.authenticators.set(a.credentialID, a); return a },
  getAuthenticator: async (id) => rows.authenticators.get(id) ?? null,
  listAuthenticatorsByUserId: async (userId) => [...rows.authenticators.values()].filter((a) => a.userId === userId),
  updateAuthenticatorCounter: async (id, counter) => { const a = { ...rows.authenticators.get(id), counter }; rows.authenticators.set(id, a); return a },
}
`

const LIBRARIES = {
  authchart: {
    auth: `import { Auth } from 'authchart'`,
    credentials: `import Credentials from 'authchart/providers/credentials'`,
    oidc: [`import OIDC from 'authchart/providers/oidc'`, `OIDC({ id: 'op', issuer: env.OP_ISSUER, clientId: 'app', clientSecret: env.OP_SECRET })`],
    email: [`import Resend from 'authchart/providers/resend'`, `Resend({ from: 'no-reply@example.com', apiKey: env.RESEND_KEY })`],
    passkey: [`import Passkey from 'authchart/providers/passkey'`, `Passkey({ relayingParty: { id: 'localhost', name: 'Bench', origin: 'http://localhost' } })`],
  },
  '@auth/core': {
    auth: `import { Auth } from '@auth/core'`,
    credentials: `import Credentials from '@auth/core/providers/credentials'`,
    oidc: [`const OIDC = (options) => ({ type: 'oidc', name: 'OP', ...options })`, `OIDC({ id: 'op', issuer: env.OP_ISSUER, clientId: 'app', clientSecret: env.OP_SECRET })`],
    email: [`import Resend from '@auth/core/providers/resend'`, `Resend({ from: 'no-reply@example.com', apiKey: env.RESEND_KEY })`],
    passkey: [`import Passkey from '@auth/core/providers/passkey'`, `Passkey({})`],
  },
}

/**
 * The entry module of one configuration for one library: a default `{ fetch }` handler.
 * `resolveSpecifier` rewrites each import's specifier (an unbundled entry outside the package
 * imports the built files by URL); by default the package names stay, for the bundler to resolve.
 */
export function entrySource(library, configuration, { resolveSpecifier = (specifier) => specifier } = {}) {
  const lib = LIBRARIES[library]
  const upTo = CONFIGURATIONS.slice(1, CONFIGURATIONS.indexOf(configuration) + 1)
  const needsAdapter = upTo.includes('email') || upTo.includes('passkey')
  return [
    lib.auth,
    lib.credentials,
    ...upTo.map((name) => lib[name][0]),
    needsAdapter ? ADAPTER : '',
    `const env = globalThis.process?.env ?? {}`,
    `const config = {`,
    `  secret: env.AUTH_SECRET ?? 'a bundle-size secret of at least 32 characters',`,
    `  trustHost: true,`,
    needsAdapter ? `  adapter,` : '',
    upTo.includes('passkey') ? `  experimental: { enableWebAuthn: true },` : '',
    `  providers: [`,
    `    Credentials({ credentials: { username: {}, password: { type: 'password' } }, authorize: ({ username }) => (username === 'alice' ? { id: '1', name: 'Alice' } : null) }),`,
    ...upTo.map((name) => `    ${lib[name][1]},`),
    `  ],`,
    `}`,
    `export default { fetch: (request) => Auth(request, config) }`,
  ]
    .filter(Boolean)
    .join('\n')
    .replace(/^(import .* from )'([^']+)'$/gm, (_, head, specifier) => `${head}'${resolveSpecifier(specifier)}'`)
}

const NODE_BUILTINS = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)]

/** esbuild options per target: `edge` as wrangler bundles a worker, `node` as an ESM Lambda. */
export const TARGETS = {
  edge: { platform: 'neutral', mainFields: ['module', 'main'], conditions: ['workerd', 'worker', 'browser'], external: ['node:*'] },
  node: { platform: 'node', conditions: ['node'], external: [] },
}

/**
 * The esbuild options both bundle shapes share: one configuration's entry module, bundled and
 * minified as ESM for `target`. The caller adds where the output goes (and, split, the chunking).
 */
function buildOptions({ library, configuration, target, strictEdge, root = ROOT }) {
  const options = TARGETS[target]
  return {
    stdin: { contents: entrySource(library, configuration), resolveDir: root, loader: 'js', sourcefile: `${configuration}.mjs` },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    // Bare builtins ('zlib', 'fs') are not available on the edge; strict mode lets them fail the build.
    external: target === 'edge' && !strictEdge ? [...options.external, ...builtinModules] : options.external,
    platform: options.platform,
    mainFields: options.mainFields,
    conditions: options.conditions,
    metafile: true,
    logLevel: 'silent',
  }
}

/**
 * Bundles one configuration of one library for one target; returns the sizes, the metafile and
 * the output path. `root` is the checkout the package names resolve from (by default this one; the
 * bench's A/B mode passes a previous commit's built copy).
 */
export async function bundle({ library, configuration, target, outdir, strictEdge = false, root = ROOT }) {
  const outfile = join(outdir, `${target}-${library.replace(/[@/]/g, '_')}-${configuration}.mjs`)
  const result = await build({ ...buildOptions({ library, configuration, target, strictEdge, root }), outfile })
  const code = readFileSync(outfile)
  return { library, configuration, target, outfile, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, metafile: result.metafile }
}

/**
 * The split-chunk shape of one configuration (esbuild `splitting: true`, as Next.js, Vite and
 * Rollup emit code): the entry and the chunks it imports statically, which every cold start loads
 * (a credentials-only request path loads no other: its `import()`s are taken only by OAuth, e-mail,
 * WebAuthn, a second factor or an enabled inspector), next to all chunks emitted.
 */
export async function bundleSplit({ library, configuration, target, outdir, strictEdge = false }) {
  const chunkDir = join(outdir, `split-${target}-${library.replace(/[@/]/g, '_')}-${configuration}`)
  const result = await build({
    ...buildOptions({ library, configuration, target, strictEdge }),
    splitting: true,
    outdir: chunkDir,
    entryNames: 'entry',
    chunkNames: 'chunk-[hash]',
  })
  const outputs = result.metafile.outputs
  const chunks = Object.keys(outputs).filter((path) => path.endsWith('.js'))
  const entry = chunks.find((path) => /(^|\/)entry\.js$/.test(path))
  const atStart = new Set()
  for (const pending = [entry]; pending.length > 0; ) {
    const path = pending.pop()
    if (atStart.has(path)) continue
    atStart.add(path)
    for (const { path: imported, kind } of outputs[path].imports) if (kind === 'import-statement' && outputs[imported]) pending.push(imported)
  }
  const sizes = (paths) => {
    let bytes = 0
    let gzipBytes = 0
    for (const path of paths) {
      const code = readFileSync(resolve(path)) // metafile paths are relative to the working directory
      bytes += code.length
      gzipBytes += gzipSync(code, { level: 9 }).length
    }
    return { bytes, gzipBytes }
  }
  return { library, configuration, target, chunks: chunks.length, atStart: { files: atStart.size, ...sizes(atStart) }, all: sizes(chunks) }
}

/** The inputs that weigh most in a bundle, grouped by package (or by folder for our own code). */
export function topContributors(metafile, count = 10) {
  const output = Object.values(metafile.outputs)[0]
  const byGroup = new Map()
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)
    const group = packageMatch ? packageMatch[1] : path.replace(/^dist\//, '').replace(/\/[^/]+$/, '/')
    byGroup.set(group, (byGroup.get(group) ?? 0) + bytesInOutput)
  }
  return [...byGroup.entries()].sort((a, b) => b[1] - a[1]).slice(0, count).map(([group, bytes]) => ({ group, bytes }))
}

/** Bundles every configuration of both libraries for both targets. */
export async function bundleAll({ outdir, targets = Object.keys(TARGETS), libraries = Object.keys(LIBRARIES) } = {}) {
  const results = []
  for (const target of targets)
    for (const configuration of CONFIGURATIONS)
      for (const library of libraries) results.push(await bundle({ library, configuration, target, outdir }))
  return results
}

const kb = (bytes) => (bytes / 1024).toFixed(0)

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { json: { type: 'boolean' }, top: { type: 'string' }, out: { type: 'string' } } })
  const outdir = values.out ? resolve(values.out) : mkdtempSync(join(tmpdir(), 'authchart-bundle-'))
  mkdirSync(outdir, { recursive: true })
  try {
    const results = await bundleAll({ outdir })
    if (values.json) {
      console.log(JSON.stringify(results.map(({ metafile, ...rest }) => ({ ...rest, top: topContributors(metafile) })), null, 2))
    } else {
      for (const target of Object.keys(TARGETS)) {
        console.log(`\n${target} bundles (esbuild, minified; KB / KB gzipped)`)
        console.log('| configuration | authchart | @auth/core | ratio (min / gz) |')
        console.log('|---|---:|---:|---:|')
        for (const configuration of CONFIGURATIONS) {
          const [ours, theirs] = ['authchart', '@auth/core'].map((library) =>
            results.find((r) => r.target === target && r.configuration === configuration && r.library === library),
          )
          console.log(
            `| ${configuration} | ${kb(ours.bytes)} / ${kb(ours.gzipBytes)} | ${kb(theirs.bytes)} / ${kb(theirs.gzipBytes)} | ${(ours.bytes / theirs.bytes).toFixed(2)} / ${(ours.gzipBytes / theirs.gzipBytes).toFixed(2)} |`,
          )
        }
      }
      console.log('\nsplit-chunk shape (esbuild splitting: true), edge, credentials only; KB / KB gzipped')
      console.log('| library | loaded at start (entry + static chunks) | all chunks |')
      console.log('|---|---:|---:|')
      for (const library of ['authchart', '@auth/core']) {
        const split = await bundleSplit({ library, configuration: 'credentials', target: 'edge', outdir })
        console.log(`| ${library} | ${kb(split.atStart.bytes)} / ${kb(split.atStart.gzipBytes)} (${split.atStart.files} files) | ${kb(split.all.bytes)} / ${kb(split.all.gzipBytes)} (${split.chunks} files) |`)
      }
      const count = Number(values.top ?? 0)
      if (count > 0)
        for (const r of results.filter((r) => r.target === 'edge')) {
          console.log(`\n${r.library}, ${r.configuration} (edge): largest inputs, KB minified`)
          for (const { group, bytes } of topContributors(r.metafile, count)) console.log(`  ${kb(bytes).padStart(6)}  ${group}`)
        }
    }
  } finally {
    if (!values.out) rmSync(outdir, { recursive: true, force: true })
  }
}
