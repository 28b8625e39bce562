/**
 * README `server.ts` as a Node server on loopback: the built-in sign-in page, a real sign-in over
 * HTTP, and the app's own `/` where the browser lands afterwards (not Auth's "Bad request.").
 */
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CookieJar, SECRET } from '../fixtures/http.js'
import { loadSnippet } from './snippet.js'

let app: FastifyInstance
let origin: string
const printed: string[] = []

beforeAll(async () => {
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line))
  try {
    ;({ app } = await loadSnippet<{ app: FastifyInstance }>('server.ts', { AUTH_SECRET: SECRET, PORT: '0', HOST: '127.0.0.1' }))
  } finally {
    log.mockRestore()
  }
  const { port } = app.server.address() as { port: number }
  origin = `http://127.0.0.1:${port}`
})
afterAll(() => app?.close())

async function send(jar: CookieJar, path: string, form?: Record<string, string>): Promise<Response> {
  const response = await fetch(new URL(path, origin), {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(form ? { body: new URLSearchParams(form) } : {}),
  })
  jar.store(response)
  return response
}

describe('README server.ts', () => {
  it('prints where to sign in', () => {
    expect(printed).toEqual([`Sign in at ${origin}/auth/signin`])
  })

  it('serves the sign-in page, signs alice in, and answers / with her session', async () => {
    const jar = new CookieJar()
    expect(await (await send(jar, '/')).json()).toEqual({ signedIn: false, signIn: '/auth/signin' })
    const page = await (await send(jar, '/auth/signin')).text()
    expect(page).toContain('name="username"')
    const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(page)![1]!
    const signIn = await send(jar, '/auth/callback/credentials', { username: 'alice', password: 'wonderland', csrfToken })
    expect(signIn.status).toBe(302)
    const landing = new URL(signIn.headers.get('location')!, origin)
    expect(landing.href).toBe(`${origin}/`)
    const home = await send(jar, landing.pathname)
    expect(home.status).toBe(200)
    expect(await home.json()).toEqual({
      signedInAs: { name: 'Alice', email: 'alice@example.com' },
      signOut: '/auth/signout',
    })
  })
})
