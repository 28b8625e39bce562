/**
 * `requireRecentAuth` as an integration serves it over real HTTP: a route guarded with
 * `{ maxAge: 60 }` at `/settings` answers 200 right after a sign-in, and for a session whose
 * factor was proven an hour ago sends a page request to prove a factor again (303 to the
 * re-authentication page with the return path)
 * and answers a fetch with 401, `WWW-Authenticate` detail and the URL to open.
 */
import { expect, it } from 'vitest'
import { encode } from '../../core/jwt.js'
import { CookieJar, SECRET } from '../fixtures/http.js'

const SESSION_COOKIE = 'authjs.session-token'

/**
 * Signs Alice in with her password at the app listening at `origin`, as a browser posts the
 * credentials form: the CSRF cookie and token first, every cookie kept in `jar`.
 */
export async function signInOverHttp(origin: string, jar: CookieJar): Promise<Response> {
  const csrf = await fetch(`${origin}/auth/csrf`)
  jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const response = await fetch(`${origin}/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken, username: 'alice', password: 'wonderland' }),
  })
  jar.store(response)
  return response
}

/** A session cookie whose password was proven an hour ago. */
async function staleCookie() {
  const hourAgo = Math.floor(Date.now() / 1000) - 3600
  const token = await encode({ token: { sub: 'u-1', name: 'Alice', fva: { pwd: hourAgo } }, secret: SECRET, salt: SESSION_COOKIE })
  return `${SESSION_COOKIE}=${token}`
}

/** The suite, for an app listening at `origin()` with `/settings` guarded by `requireRecentAuth(config, { maxAge: 60 })`. */
export function recentAuthSuite(origin: () => string) {
  it('requireRecentAuth lets a request through right after a sign-in', async () => {
    const jar = new CookieJar()
    await signInOverHttp(origin(), jar)
    const response = await fetch(`${origin()}/settings`, { headers: { cookie: jar.header() } })
    expect(response.status).toBe(200)
  })

  it('requireRecentAuth sends a page request with an old proof to re-authenticate, back to the page', async () => {
    const response = await fetch(`${origin()}/settings?tab=keys`, {
      redirect: 'manual',
      headers: { cookie: await staleCookie(), accept: 'text/html,application/xhtml+xml' },
    })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe(
      `${origin()}/auth/reauthenticate?callbackUrl=${encodeURIComponent('/settings?tab=keys')}&factors=hwk+otp+pwd+email+fed`,
    )
  })

  it('requireRecentAuth answers a fetch with an old proof with 401, WWW-Authenticate and the URL', async () => {
    const response = await fetch(`${origin()}/settings`, { headers: { cookie: await staleCookie(), accept: 'application/json' } })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_user_authentication", max_age=60, /)
    expect(await response.json()).toMatchObject({
      error: 'insufficient_user_authentication',
      maxAge: 60,
      url: `${origin()}/auth/reauthenticate?callbackUrl=${encodeURIComponent('/settings')}&factors=hwk+otp+pwd+email+fed`,
    })
  })

  it('requireRecentAuth answers a signed-out fetch with 401 login_required', async () => {
    const response = await fetch(`${origin()}/settings`, { headers: { accept: 'application/json' } })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ error: 'login_required' })
  })
}
