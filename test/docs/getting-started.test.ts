/**
 * The Hono getting-started page runs as a reader pastes it: its `server.ts` block, with the
 * package mapped to the sources and without the line that starts listening, is the app; a visitor
 * without a session gets 401 from the protected page, signs in as the page says, and sees it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Hono } from 'hono'
import { afterAll, expect, it } from 'vitest'

const root = process.cwd()
const page = readFileSync(join(root, 'docs', 'getting-started', 'hono.md'), 'utf8')
const block = /^```ts \[server\.ts\]\n([\s\S]*?)^```$/m.exec(page)?.[1]
const folder = join(root, 'test', 'docs', '.run')
const origin = 'http://localhost:3000'
const host = { host: 'localhost:3000' }

afterAll(() => rmSync(folder, { recursive: true, force: true }))

/** The page's app, its imports pointed at the sources and `serve(...)` left out. */
async function pageApp(): Promise<Hono> {
  expect(block, 'docs/getting-started/hono.md has a server.ts block').toBeDefined()
  const source = block!
    .replace("from 'authchart/hono'", `from '${join(root, 'integrations', 'hono', 'index.ts')}'`)
    .replace("from 'authchart/providers/credentials'", `from '${join(root, 'providers', 'credentials.ts')}'`)
    .replace(/^import \{ serve \} from '@hono\/node-server'\n/m, '')
    .replace(/^serve\(.*\)\n/m, 'export { app }\n')
  expect(source).not.toMatch(/authchart\/|serve\(/)
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, 'server.ts'), source)
  return ((await import(/* @vite-ignore */ pathToFileURL(join(folder, 'server.ts')).href)) as { app: Hono }).app
}

it('takes a visitor from 401 to the protected page by the sign-in the page describes', async () => {
  process.env.AUTH_SECRET ??= 'a-getting-started-secret-of-enough-length-0123'
  process.env.AUTH_TRUST_HOST = 'true'
  const app = await pageApp()
  expect((await app.request(`${origin}/protected`, { headers: host })).status).toBe(401)
  expect(await (await app.request(`${origin}/`, { headers: host })).text()).toContain('/api/auth/signin?callbackUrl=/protected')
  expect((await app.request(`${origin}/api/auth/signin?callbackUrl=/protected`, { headers: host })).status).toBe(200)

  const csrf = await app.request(`${origin}/api/auth/csrf`, { headers: host })
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const signIn = async (password: string) =>
    app.request(`${origin}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { ...host, cookie: csrf.headers.getSetCookie().map((c) => c.split(';')[0]).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken, username: 'alice', password, callbackUrl: '/protected' }),
    })
  const wrong = await signIn('not-her-password')
  expect(wrong.headers.getSetCookie().some((c) => c.startsWith('authjs.session-token='))).toBe(false)

  const signedIn = await signIn('wonderland')
  expect(signedIn.status).toBe(302)
  expect(signedIn.headers.get('location')).toBe(`${origin}/protected`)
  const cookie = signedIn.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const protectedPage = await app.request(`${origin}/protected`, { headers: { ...host, cookie } })
  expect(protectedPage.status).toBe(200)
  expect(await protectedPage.text()).toContain('Hello Alice, this page is protected.')
})
