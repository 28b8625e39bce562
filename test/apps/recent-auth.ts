/**
 * `requireRecentAuth` in an example app: its `/security` page asks for a factor proven in the last
 * ten minutes. Over real HTTP against the built app: a session whose password was proven an hour
 * ago is sent to the re-authentication page of the same site with the path to come back to (and
 * that page is served), a fetch gets 401 with the `WWW-Authenticate` detail and the URL to open, a
 * fresh session sees the page, and a visitor without a session is sent to sign in.
 *
 * @module
 */
import { expect, it } from 'vitest'
import { encode } from '../../core/jwt.js'
import { AppClient } from './helpers.js'
import { APP_SECRET, type RunningApp } from './setup.js'

const SESSION_COOKIE = 'authjs.session-token'
/** The factors a policy without `factors` accepts, as the URL names them. */
const ANY_FACTOR = 'hwk+otp+pwd+email+fed'

/** How an app's protected page and its fetch counterpart are asked for. */
export interface RecentAuthApp {
  app: () => RunningApp
  /** The guarded page's path (`/security`, `/security/` where the app's routes end in a slash). */
  path: string
  /** The fetch/JSON request of the page (a `fetch` with `Accept: application/json`, an enhanced form). */
  fetchData: (client: AppClient) => Promise<Response>
  /** The detail in the 401's JSON body (some frameworks wrap it). */
  detailOf?: (body: unknown) => unknown
  /** Where the app serves the auth routes (default `/auth`; Next.js: `/api/auth`). */
  basePath?: string
}

/** A client holding a session cookie whose password was proven an hour ago. */
export async function staleClient(origin: string): Promise<AppClient> {
  const hourAgo = Math.floor(Date.now() / 1000) - 3600
  const token = await encode({
    token: { sub: 'alice', name: 'Alice', email: 'alice@example.com', fva: { pwd: hourAgo } },
    secret: APP_SECRET,
    salt: SESSION_COOKIE,
  })
  const client = new AppClient(origin)
  client.jar.cookies.set(SESSION_COOKIE, token)
  return client
}

async function signIn(client: AppClient, basePath: string): Promise<void> {
  const response = await client.post(`${basePath}/callback/credentials`, {
    csrfToken: await client.csrfToken(basePath),
    username: 'alice',
    password: 'wonderland',
  })
  expect(response.status).toBe(302)
  expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
}

const PAGE = { accept: 'text/html,application/xhtml+xml', 'sec-fetch-mode': 'navigate' }

/** Registers the tests for one app. */
export function recentAuthAppSuite({ app, path, fetchData, detailOf = (body) => body, basePath = '/auth' }: RecentAuthApp): void {
  const reauthenticationUrl = () => `${app().origin}${basePath}/reauthenticate?callbackUrl=${encodeURIComponent(path)}&factors=${ANY_FACTOR}`

  it('requireRecentAuth shows the sensitive page to a session signed in just now', async () => {
    const client = new AppClient(app().origin)
    await signIn(client, basePath)
    const response = await client.get(path, PAGE)
    expect(response.status).toBe(200)
    expect(await response.text()).toMatch(/Security settings of (<!--[^>]*-->)?Alice/)
  })

  it('requireRecentAuth sends a stale session to re-authenticate on this site, back to the page, and the site serves that page', async () => {
    const client = await staleClient(app().origin)
    const response = await client.get(path, PAGE)
    expect(response.status).toBe(303)
    expect(new URL(response.headers.get('location')!, app().origin).href).toBe(reauthenticationUrl())
    const reauthentication = await client.get(reauthenticationUrl(), PAGE)
    expect([302, 303]).toContain(reauthentication.status)
    const step = new URL(reauthentication.headers.get('location')!, app().origin)
    expect(step.origin).toBe(app().origin)
    expect(step.pathname).toBe(`${basePath}/step/reauthenticate`)
    const page = await client.get(step.href, PAGE)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('name="password"')
  })

  it('requireRecentAuth answers a stale session’s fetch with 401, WWW-Authenticate and the URL to open', async () => {
    const response = await fetchData(await staleClient(app().origin))
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_user_authentication", max_age=600, factors="${ANY_FACTOR.replaceAll('+', ' ')}", url="${reauthenticationUrl()}"`,
    )
    expect(detailOf(await response.json())).toMatchObject({
      error: 'insufficient_user_authentication',
      maxAge: 600,
      factors: ANY_FACTOR.split('+'),
      url: reauthenticationUrl(),
    })
  })

  it('requireRecentAuth sends a visitor without a session to sign in, back to the page', async () => {
    const response = await new AppClient(app().origin).get(path, PAGE)
    expect(response.status).toBe(303)
    expect(new URL(response.headers.get('location')!, app().origin).href).toBe(
      `${app().origin}${basePath}/signin?callbackUrl=${encodeURIComponent(path)}`,
    )
  })
}
