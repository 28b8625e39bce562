/**
 * The sessions page: `GET {basePath}/sessions` asked for HTML (a browser's navigation) renders the
 * signed-in user's sessions with a CSRF-checked sign-out form per other session; the same route
 * without `text/html` stays the JSON API. A form post answers with a redirect back to the page.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { describeUserAgent, readableTime, renderSessionsPage } from '../../core/pages/sessions.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }
const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1'
const theme = { colorScheme: 'auto', logo: '', brandColor: '', buttonText: '' } as const

function databaseConfig() {
  const store = createMemoryStore()
  return { store, config: testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database' } }) }
}

async function signedIn(config: ReturnType<typeof testConfig>, userAgent: string) {
  const client = new Client(config)
  const csrfToken = await client.csrfToken()
  await client.send({ path: '/callback/credentials', body: { csrfToken, username: 'alice', password: 'wonderland' }, headers: { 'user-agent': userAgent } })
  return client
}

/** The hidden fields of the page's form whose button reads `button`. */
function formOf(html: string, button: string): Record<string, string> {
  const form = [...html.matchAll(/<form [^>]*>([\s\S]*?)<\/form>/g)].find((m) => m[1]!.includes(`>${button}</button>`))
  if (!form) throw new Error(`no form with the button "${button}"`)
  return Object.fromEntries([...form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]))
}

describe('the sessions page', () => {
  it('lists the signed-in user\'s sessions for a browser, this one marked, and signs another out from its form', async () => {
    const { store, config } = databaseConfig()
    const laptop = await signedIn(config, CHROME_LINUX)
    const phone = await signedIn(config, SAFARI_IPHONE)

    const page = await laptop.send({ path: '/sessions', headers: HTML })
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html')
    expect(page.headers.get('cache-control')).toBe('private, no-cache, no-store')
    const html = await page.text()
    expect(html).toContain('<h1>Your sessions</h1>')
    expect(html).toMatch(/<strong>Chrome on Linux<\/strong> <span class="badge">This browser<\/span>/)
    expect(html).toContain('<strong>Safari on iOS</strong>')
    expect(html).not.toContain(laptop.jar.get(SESSION_COOKIE)!)
    expect(html).not.toContain(phone.jar.get(SESSION_COOKIE)!)

    const response = await laptop.send({ path: '/sessions', body: formOf(html, 'Sign out'), headers: HTML })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/sessions`)
    expect(store.sessions.has(phone.jar.get(SESSION_COOKIE)!)).toBe(false)
    expect(store.sessions.has(laptop.jar.get(SESSION_COOKIE)!)).toBe(true)
    const after = await (await laptop.send({ path: '/sessions', headers: HTML })).text()
    expect(after).toContain('Signed out of 1 session.')
    expect(after).not.toContain('Safari on iOS')
    // The notice is told once: a reload shows the list without it.
    const reloaded = await (await laptop.send({ path: '/sessions', headers: HTML })).text()
    expect(reloaded).toContain('<h1>Your sessions</h1>')
    expect(reloaded).not.toContain('Signed out of')
  })

  it('believes only a notice of its own shape, and never one in the URL', async () => {
    const { config } = databaseConfig()
    const laptop = await signedIn(config, CHROME_LINUX)
    for (const value of ['<script>', '99999', '-1', 'all']) {
      laptop.jar.cookies.set('authchart.notice', value)
      const html = await (await laptop.send({ path: '/sessions', headers: HTML })).text()
      expect(html, value).not.toContain('Signed out of')
      expect(html).not.toContain('<script>')
    }
    const linked = await (await laptop.send({ path: '/sessions?revoked=5', headers: HTML })).text()
    expect(linked).not.toContain('Signed out of')
  })

  it('signs out everywhere from its form and lands on the sign-in page without a session', async () => {
    const { store, config } = databaseConfig()
    const laptop = await signedIn(config, CHROME_LINUX)
    await signedIn(config, SAFARI_IPHONE)
    const html = await (await laptop.send({ path: '/sessions', headers: HTML })).text()
    const response = await laptop.send({ path: '/sessions', body: formOf(html, 'Sign out everywhere, this browser too'), headers: HTML })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    expect(laptop.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(store.sessions.size).toBe(0)
    const signInPage = await (await laptop.send({ path: '/signin', headers: HTML })).text()
    expect(signInPage).toContain('You are signed out of every session, this browser too.')
    expect(await (await laptop.send({ path: '/signin', headers: HTML })).text()).not.toContain('signed out of every session')
  })

  it('may not be framed: its sign-out buttons cannot be clickjacked', async () => {
    const { config } = databaseConfig()
    const laptop = await signedIn(config, CHROME_LINUX)
    const page = await laptop.send({ path: '/sessions', headers: HTML })
    expect(page.headers.get('content-security-policy')).toMatch(/; frame-ancestors 'none'$/)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
  })

  it('refuses a form post without the CSRF token, revoking nothing', async () => {
    const { store, config } = databaseConfig()
    const laptop = await signedIn(config, CHROME_LINUX)
    await signedIn(config, SAFARI_IPHONE)
    const response = await laptop.send({ path: '/sessions', body: { revoke: 'others' }, headers: HTML })
    expect(response.status).toBe(400)
    expect(store.sessions.size).toBe(2)
  })

  it('sends a signed-out browser to sign in first, and back to the page after', async () => {
    const { config } = databaseConfig()
    const response = await new Client(config).send({ path: '/sessions', headers: HTML })
    expect(response.status).toBe(302)
    const location = new URL(response.headers.get('location')!)
    expect(location.pathname).toBe('/auth/signin')
    expect(location.searchParams.get('callbackUrl')).toBe(`${ORIGIN}/auth/sessions`)
  })

  it('stays the JSON API for a client that does not ask for HTML, setting no CSRF cookie', async () => {
    const { config } = databaseConfig()
    const laptop = await signedIn(config, CHROME_LINUX)
    const response = await laptop.send({ path: '/sessions', headers: { accept: 'application/json' } })
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.getSetCookie()).toEqual([])
    expect(await response.json()).toEqual([expect.objectContaining({ current: true, userAgent: CHROME_LINUX })])
    const signedOut = await new Client(config).send({ path: '/sessions' })
    expect(signedOut.status).toBe(401)
    expect(await signedOut.json()).toBeNull()
  })

  it('lists a JWT session alone, with sign-out everywhere only when a store can end them all', async () => {
    const jwt = await signedIn(testConfig(), CHROME_LINUX)
    const html = await (await jwt.send({ path: '/sessions', headers: HTML })).text()
    expect(html).toContain('This browser')
    expect(html).not.toContain('<form')
  })
})

describe('what the sessions page shows', () => {
  it.each([
    [CHROME_LINUX, 'Chrome on Linux'],
    [SAFARI_IPHONE, 'Safari on iOS'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:141.0) Gecko/20100101 Firefox/141.0', 'Firefox on Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 Edg/140.0.0.0', 'Edge on macOS'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36', 'Chrome on Linux'],
    ['curl/8.5.0', 'curl/8.5.0'],
    [null, 'Unknown browser'],
    ['x'.repeat(200), `${'x'.repeat(59)}…`],
  ])('names the user agent %s as "%s"', (userAgent, name) => {
    expect(describeUserAgent(userAgent)).toBe(name)
  })

  it('escapes what a browser sent, and names each sign-out button by its session', () => {
    const { html } = renderSessionsPage(theme, {
      sessions: [
        { id: 'a', createdAt: '2026-11-23T12:00:00.000Z', lastSeenAt: null, userAgent: CHROME_LINUX, expires: null, current: true },
        { id: 'b"><script>', createdAt: '2026-11-20T08:30:00.000Z', lastSeenAt: '2026-11-22T09:00:00.000Z', userAgent: '<script>alert(1)</script>', expires: null, current: false },
      ],
      action: 'https://app.test/auth/sessions',
      csrfToken: 't',
      canRevokeOne: true,
      canRevokeAll: true,
    })
    expect(html).not.toContain('<script>alert(1)')
    expect(html).toContain('value="b&quot;&gt;&lt;script&gt;"')
    expect(html).toContain(`aria-label="Sign out &lt;script&gt;alert(1)&lt;/script&gt;, signed in ${readableTime('2026-11-20T08:30:00.000Z')}"`)
    expect(html).toContain('Signed in 20 Nov 2026, 08:30 UTC, last active 22 Nov 2026, 09:00 UTC')
  })
})
