// `npm run demo` on a fresh checkout: scripts/demo.mjs bundles the demo with the package's own sources
// (no `npm run build` first) and the demo it starts answers a sign-in with its printed user.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CookieJar } from '../fixtures/http.js'

const root = new URL('../..', import.meta.url).pathname
let demo: ChildProcess
let origin: string
let dataDir: string
const output: string[] = []

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'authchart-demo-start-'))
  const port = await freePort()
  demo = spawn(process.execPath, ['scripts/demo.mjs'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DEMO_DATA_DIR: dataDir, NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  await new Promise<void>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output.push(chunk.toString())
      if (output.join('').includes('authchart demo on')) resolve()
    }
    demo.stdout!.on('data', seen)
    demo.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()))
    demo.on('exit', (code) => reject(new Error(`the demo exited (${code}) before listening:\n${output.join('')}`)))
  })
  origin = `http://127.0.0.1:${port}`
}, 60_000)

afterAll(() => {
  demo?.kill('SIGTERM')
  rmSync(dataDir, { recursive: true, force: true })
})

describe('npm run demo', () => {
  it('is the script the README quick start runs', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    expect(manifest.scripts.demo).toMatch(/scripts\/demo\.mjs/)
    expect(manifest.scripts.demo).not.toMatch(/build/)
  })

  it('runs the package from its sources, resolved by name through package.json exports', () => {
    const bundle = readFileSync(join(root, 'demo/.server.bundle.mjs'), 'utf8')
    // The sources are inside the bundle; the package is never loaded from dist/.
    expect(bundle).toMatch(/core\/handler|core\/auth\.ts|core\/index\.ts/)
    expect(bundle).not.toMatch(/^import[^\n]*from "authchart(\/[^"]*)?"/m)
    expect(bundle).not.toMatch(/dist\/core\//)
  })

  it('signs the printed demo user in', async () => {
    const jar = new CookieJar()
    const send = async (path: string, form?: Record<string, string>) => {
      const response = await fetch(`${origin}${path}`, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        body: form ? new URLSearchParams(form) : undefined,
      })
      jar.store(response)
      return response
    }
    const { csrfToken } = (await (await send('/auth/csrf')).json()) as { csrfToken: string }
    const signIn = await send('/auth/callback/credentials', { csrfToken, username: 'demo', password: 'authchart-demo' })
    expect(signIn.status).toBe(302)
    // The demo's terms-of-service extension asks once per user, before the session is issued.
    if (signIn.headers.get('location') === `${origin}/auth/step/signin-completion`) {
      expect(await (await send('/auth/step/signin-completion')).text()).toContain('Terms of service')
      expect((await send('/auth/step/signin-completion', { csrfToken, event: 'terms.accept' })).status).toBe(302)
    }
    expect(jar.get('authjs.session-token')).toMatch(/^[0-9a-f-]{36}$/)
    const session = (await (await send('/auth/session')).json()) as { user?: { name?: string } }
    expect(session.user?.name).toBe('Demo User')
  })
})
