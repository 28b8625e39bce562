/**
 * Charts are compiled at build time: a JWT session read in a fresh process runs the generated
 * session table and loads no xstate. The only importers of xstate it may load are the machine files
 * of charts that have no logic module yet (their flows still compile at run time); the list shrinks
 * to nothing as they are split.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const scratch = mkdtempSync(join(tmpdir(), 'authchart-request-imports-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Transitional: the machine files of charts with no logic module yet, which import xstate. */
/** Every built-in chart is compiled at build time: no notation is read on the request path. */
const PENDING_CHARTS: string[] = []

/** Runs `script` in a fresh Node process on the sources; what it loaded, and what imported xstate. */
function loadedBy(script: string): { output: string; loaded: string[]; xstateImporters: string[] } {
  const entry = join(scratch, `run-${Math.random().toString(36).slice(2)}.ts`)
  const record = `${entry}.modules`
  writeFileSync(entry, script)
  writeFileSync(record, '')
  const output = execFileSync(process.execPath, ['--import', './test/fixtures/loaded-modules.mjs', entry], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, AUTHCHART_LOADED_MODULES: record },
  })
  const root = pathToFileURL(ROOT).href + '/'
  const lines = readFileSync(record, 'utf8').split('\n')
  const inRepository = (url: string) => url.replace(root, '')
  return {
    output,
    loaded: lines.filter((line) => line.startsWith('load ')).map((line) => inRepository(line.slice(5))),
    xstateImporters: lines
      .filter((line) => /^import xstate(\/\S*)? /.test(line))
      .map((line) => inRepository(line.split(' ')[2]!)),
  }
}

const source = (path: string) => JSON.stringify(pathToFileURL(join(ROOT, path)).href)

describe('a JWT session read in a fresh process', () => {
  const run = loadedBy(`
    import { Auth } from ${source('core/index.ts')}
    import { encode } from ${source('core/jwt.ts')}
    import Credentials from ${source('providers/credentials.ts')}
    const secret = 'a-secret-of-at-least-thirty-two-characters'
    const salt = '__Secure-authjs.session-token'
    const token = await encode({ token: { sub: 'u-1', name: 'Ada' }, secret, salt })
    const request = new Request('https://app.example/auth/session', { headers: { cookie: salt + '=' + token } })
    const response = await Auth(request, { secret, trustHost: true, providers: [Credentials({ authorize: () => null })] })
    console.log(JSON.stringify({ status: response.status, body: await response.json() }))
  `)

  it('reads the session', () => {
    const { status, body } = JSON.parse(run.output) as { status: number; body: { user: unknown } }
    expect(status).toBe(200)
    expect(body.user).toEqual({ name: 'Ada' })
  })

  it('runs the generated session table, never the session, credentials or logout notation', () => {
    expect(run.loaded).toContain('core/charts/session.ts')
    expect(run.loaded.filter((file) => /machines\/(session|credentials-signin|logout)\.machine\.ts$/.test(file))).toEqual([])
  })

  it('loads no run-time chart compiler: the built-in flows are defined over their compiled tables', () => {
    expect(run.loaded).toContain('core/engine/compiled-flow.ts')
    expect(run.loaded.filter((file) => /core\/engine\/(runtime-compiler|flow)\.ts$/.test(file))).toEqual([])
  })

  it('imports xstate only through the machine files of charts not yet split', () => {
    expect(run.xstateImporters.filter((file) => !PENDING_CHARTS.includes(file))).toEqual([])
  })
})
