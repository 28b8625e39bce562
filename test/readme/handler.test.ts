/**
 * README `handler.ts`: the fetch handler a Bun, Deno or Workers runtime serves, called as they call
 * it. After signing in the browser lands on `/`, which the handler answers with the session.
 */
import { describe, expect, it } from 'vitest'
import { CookieJar, SECRET } from '../fixtures/http.js'
import { loadSnippet } from './snippet.js'

const { default: handler } = await loadSnippet<{ default: { fetch(request: Request): Promise<Response> } }>('handler.ts', {
  AUTH_SECRET: SECRET,
})
const origin = 'http://localhost:8000'

async function send(jar: CookieJar, path: string, form?: Record<string, string>): Promise<Response> {
  const response = await handler.fetch(
    new Request(new URL(path, origin), {
      method: form ? 'POST' : 'GET',
      headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form) } : {}),
    }),
  )
  jar.store(response)
  return response
}

describe('README handler.ts', () => {
  it('signs in through /auth and answers / with the session where the browser lands', async () => {
    const jar = new CookieJar()
    expect(await (await send(jar, '/')).json()).toEqual({ session: null })
    const { csrfToken } = (await (await send(jar, '/auth/csrf')).json()) as { csrfToken: string }
    const signIn = await send(jar, '/auth/callback/credentials', { username: 'alice', password: 'wonderland', csrfToken })
    expect(signIn.status).toBe(302)
    const landing = new URL(signIn.headers.get('location')!)
    expect(landing.origin).toBe(origin)
    const page = await send(jar, landing.pathname)
    expect(page.status).toBe(200)
    expect(await page.json()).toMatchObject({ session: { user: { name: 'Alice' } } })
  })
})
