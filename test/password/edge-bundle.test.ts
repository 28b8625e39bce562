/**
 * The hasher on a runtime without the native module (workerd): bundled for the edge, the bundle
 * carries no `@node-rs/argon2` and no bare Node builtin, and run where the native module cannot
 * be found, it falls back to the plain-JS argon2 and still reads what the native one wrote.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, type Plugin } from 'esbuild'
import { afterAll, describe, expect, it } from 'vitest'
import { passwordHasher } from '../../core/password/hashing.js'

/**
 * bcryptjs imports the bare `crypto` only to make salts (never when verifying) and its package.json
 * `browser` field maps it to nothing; a neutral-platform esbuild build does not read that field,
 * so the map is applied here as browser, webpack and wrangler (nodejs_compat) builds apply it.
 */
const bcryptjsBrowserField: Plugin = {
  name: 'bcryptjs-browser-field',
  setup(build) {
    build.onResolve({ filter: /^crypto$/ }, (args) =>
      args.importer.includes('bcryptjs') ? { path: 'crypto', namespace: 'empty' } : undefined,
    )
    build.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export default undefined', loader: 'js' }))
  },
}

const work = mkdtempSync(join(tmpdir(), 'authchart-password-edge-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('authchart/password bundled for the edge', () => {
  it('bundles without the native module or a bare builtin, and verifies with the portable argon2', async () => {
    const { metafile } = await build({
      entryPoints: { password: join(process.cwd(), 'core/password/index.ts') },
      bundle: true,
      splitting: true,
      format: 'esm',
      outdir: work,
      outExtension: { '.js': '.mjs' },
      metafile: true,
      logLevel: 'silent',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['workerd', 'worker', 'browser'],
      external: ['node:*'],
      plugins: [bcryptjsBrowserField],
    })
    const inputs = Object.keys(metafile.inputs)
    expect(inputs.some((path) => path.includes('@node-rs/argon2'))).toBe(false)
    expect(inputs.some((path) => path.includes('@noble/hashes/argon2'))).toBe(true)
    const imports = Object.values(metafile.outputs).flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path))
    expect(imports.filter((path) => !path.startsWith('node:'))).toEqual([])

    const stored = await passwordHasher({ argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 }, argon2Implementation: 'native' }).hash('edge')
    // Run by plain Node from a folder with no node_modules: the native module's import fails, as on workerd.
    const probe = `
      import { passwordHasher } from './password.mjs'
      const cheap = { memoryCost: 1024, timeCost: 1, parallelism: 1 }
      const native = await passwordHasher({ argon2: cheap, argon2Implementation: 'native' }).hash('x').then(() => 'loaded', (e) => e.message)
      const hasher = passwordHasher({ argon2: cheap })
      const right = await hasher.verify(process.argv[1], 'edge')
      const wrong = await hasher.verify(process.argv[1], 'edgy')
      const bcrypt = await hasher.verify('$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a', 'rasmuslerdorf')
      console.log(JSON.stringify({ native, right, wrong, bcrypt }))`
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', probe, stored], { cwd: work, encoding: 'utf8' })
    expect(JSON.parse(output)).toEqual({
      native: 'the native argon2 module is not available',
      right: { valid: true, needsRehash: false },
      wrong: { valid: false, needsRehash: false },
      bcrypt: { valid: true, needsRehash: true },
    })
  }, 60_000)
})
