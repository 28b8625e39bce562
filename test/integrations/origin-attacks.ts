/**
 * The request-URL attacks every integration must refuse (scope 1 of the integrations issue), as
 * one suite each integration's test runs against its own server: an absolute-form request target
 * and a forged `X-Forwarded-Host` (with proxy trust off) must not choose the origin that lands in
 * the sign-in page's form actions and in the OAuth redirect (whose `redirect_uri` is sealed in the
 * flow's state cookie), nor where the re-authentication (`GET {basePath}/reauthenticate`) sends
 * the browser.
 *
 * @module
 */
import { expect, it } from 'vitest'
import { encode } from '../../core/jwt.js'
import OAuth from '../../providers/oauth.js'
import { credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { cookieHeader, rawRequest } from '../fixtures/raw-http.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

/**
 * A config for the suite: credentials, and an OAuth provider `op` whose endpoints are never
 * reached (the suite stops at the redirect to it).
 */
export function attackTargetConfig(options: { listHosts?: boolean } = {}) {
  return {
    secret: SECRET,
    secondFactor: totp(),
    stepUp: stepUp(),
    // Listed: only the loopback host the tests' servers listen on (any port); a forged Host is refused.
    trustHost: options.listHosts ? ['127.0.0.1'] : (true as boolean | string[]),
    logger: spyLogger(),
    providers: [
      credentialsProvider(),
      OAuth({
        id: 'op',
        authorization: 'http://op.invalid/authorize',
        token: 'http://op.invalid/token',
        userinfo: 'http://op.invalid/me',
        clientId: 'client',
        clientSecret: 'secret',
      }),
    ],
  }
}

/** What the suite needs of a running app. */
export interface OriginAttackTarget {
  port: () => number
  /** The auth base path, `/auth` by default. */
  basePath?: string
  /** The id of an OAuth provider the app configures (its authorization endpoint is never called). */
  oauthProvider: string
  /**
   * The built-in page whose form action shows the origin: `signin` unless the app has its own
   * sign-in page (`pages.signIn`), then `signout`.
   */
  page?: 'signin' | 'signout'
  /**
   * The framework itself refuses an absolute-form request target before the integration sees it
   * (SvelteKit's Node adapter joins its origin and the target into a URL that matches no route;
   * Qwik City's Node middleware reads the target as a path, `/evil.example/auth/…`, a 404).
   */
  frameworkRefusesAbsoluteForm?: boolean
  /**
   * The framework answers an absolute-form request target itself, with a redirect to that URL,
   * before any route runs (`next start` normalises a target holding `//` with a 308): no auth
   * route answers, so no form, no cookie and no OAuth redirect comes out of it.
   */
  frameworkRedirectsAbsoluteForm?: boolean
  /**
   * A `Cookie` header holding a session of the app whose proof is an hour old (sealed with the
   * app's secret), for the re-authentication's signed-in answers; without it, only a signed-out
   * browser is tried.
   */
  staleSession?: () => Promise<string>
  /** The app's `trustHost` lists its hosts (`attackTargetConfig`'s does): a forged `Host` is refused. */
  listsHosts?: boolean
}

/** A `Cookie` header with a JWT session sealed with `secret` whose password was proven an hour ago. */
export async function staleSessionCookie(secret: string): Promise<string> {
  const token = { sub: 'alice', name: 'Alice', email: 'alice@example.com', fva: { pwd: Math.floor(Date.now() / 1000) - 3600 } }
  return `authjs.session-token=${await encode({ token, secret, salt: 'authjs.session-token' })}`
}

const EVIL = 'evil.example'
/** The attacker's host as an origin (a 404 may echo the target's path, which is harmless). */
const EVIL_ORIGIN = `//${EVIL}`

/** Registers the attack tests in the calling `describe`. */
export function originAttackSuite(target: OriginAttackTarget): void {
  const base = target.basePath ?? '/auth'
  const host = () => `127.0.0.1:${target.port()}`
  const realOrigin = () => `http://${host()}`

  const attacks: [string, (path: string) => { target: string; headers: Record<string, string> }][] = [
    ['an absolute-form request target', (path) => ({ target: `http://${EVIL}${path}`, headers: { host: host() } })],
    [
      'a forged X-Forwarded-Host (proxy trust off)',
      (path) => ({ target: path, headers: { host: host(), 'x-forwarded-host': EVIL, 'x-forwarded-proto': 'https' } }),
    ],
  ]

  const page = target.page ?? 'signin'
  // The sign-in page's provider form posts to this site; the sign-out page, with nobody signed in,
  // asks nothing and its one URL is the way back to the site.
  const pageUrl = () =>
    page === 'signin' ? `action="${realOrigin()}${base}/signin/${target.oauthProvider}"` : `href="${realOrigin()}"`
  const refused = (name: string) => name.startsWith('an absolute-form') && target.frameworkRefusesAbsoluteForm

  if (target.frameworkRedirectsAbsoluteForm) {
    it('leaves an absolute-form request target to the framework, which answers it before any auth route', async () => {
      for (const path of [`${base}/${page}`, `${base}/signin/${target.oauthProvider}`]) {
        const response = await rawRequest(target.port(), { method: 'GET', target: `http://${EVIL}${path}`, headers: { host: host() } })
        expect(response.status).toBe(308)
        expect(response.headers.get('set-cookie')).toBeUndefined()
        expect(response.body).not.toContain('<form')
      }
    })
  }

  if (target.listsHosts) {
    it('refuses a forged Host with 400 on every route, before anything is sent, sealed or redirected', async () => {
      for (const path of [`${base}/${page}`, `${base}/csrf`, `${base}/session`, `${base}/signin/${target.oauthProvider}`, `${base}/reauthenticate?callbackUrl=%2F`]) {
        const response = await rawRequest(target.port(), { method: 'GET', target: path, headers: { host: EVIL, accept: 'text/html' } })
        expect(response.status, path).toBe(400)
        expect(response.headers.get('set-cookie'), path).toBeUndefined()
        expect(response.headers.get('location'), path).toBeUndefined()
        expect(response.body, path).not.toContain(EVIL)
      }
      const csrf = await rawRequest(target.port(), { target: `${base}/csrf`, headers: { host: host() } })
      const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string }
      const post = await rawRequest(target.port(), {
        method: 'POST',
        target: `${base}/signin/${target.oauthProvider}`,
        headers: { host: EVIL, cookie: cookieHeader(csrf), 'content-type': 'application/x-www-form-urlencoded', origin: `http://${EVIL}` },
        body: new URLSearchParams({ csrfToken }).toString(),
      })
      expect(post.status).toBe(400)
      expect(post.headers.get('set-cookie')).toBeUndefined()
    })
  }

  for (const [name, attack] of attacks) {
    if (target.frameworkRedirectsAbsoluteForm && name.startsWith('an absolute-form')) continue
    it(`keeps the real origin in the ${page} page's URLs under ${name}`, async () => {
      const response = await rawRequest(target.port(), { ...attack(`${base}/${page}`) })
      expect(JSON.stringify([...response.headers]) + response.body).not.toContain(EVIL_ORIGIN)
      if (refused(name)) return expect(response.status).toBeGreaterThanOrEqual(400)
      expect(response.status).toBe(200)
      expect(response.body).not.toContain(EVIL)
      expect(response.body).toContain(pageUrl())
    })

    // The pages that act for a signed-in user send a signed-out browser to sign in, and back: both
    // URLs of that redirect must be this site's, or the target would make it an open redirect.
    it(`keeps the real origin in the sign-in redirects of the user's own pages under ${name}`, async () => {
      for (const own of ['audit', 'two-factor', 'sessions']) {
        const response = await rawRequest(target.port(), {
          ...attack(`${base}/${own}`),
          headers: { ...attack(`${base}/${own}`).headers, accept: 'text/html', 'sec-fetch-mode': 'navigate' },
        })
        expect(JSON.stringify([...response.headers]) + response.body, own).not.toContain(EVIL_ORIGIN)
        if (refused(name)) {
          expect(response.status, own).toBeGreaterThanOrEqual(400)
          continue
        }
        expect(response.status, own).toBe(302)
        expect(JSON.stringify([...response.headers]), own).not.toContain(EVIL)
        const location = new URL(response.headers.get('location')![0]!, realOrigin())
        expect(location.origin, own).toBe(realOrigin())
        // An app with its own sign-in page (`page: 'signout'`) is sent there instead.
        if (page === 'signin') expect(location.pathname, own).toBe(`${base}/signin`)
        expect(location.searchParams.get('callbackUrl'), own).toBe(`${realOrigin()}${base}/${own}`)
      }
    })

    // The re-authentication starts from a URL an application's requireRecentAuth built: the page it
    // sends the browser to, and the path it brings it back to, must stay on this site; nothing
    // in the request signs anyone in.
    it(`keeps the re-authentication on this site, signing no one in, under ${name}`, async () => {
      const browsers: [string, string | undefined][] = [['signed out', undefined]]
      if (target.staleSession) browsers.push(['signed in, stale', await target.staleSession()])
      for (const [who, cookie] of browsers) {
        for (const callbackUrl of ['/security', `http://${EVIL}/steal`]) {
          const label = `${who}, callbackUrl=${callbackUrl}`
          const request = attack(`${base}/reauthenticate?${new URLSearchParams({ callbackUrl })}`)
          const headers = { ...request.headers, accept: 'text/html', 'sec-fetch-mode': 'navigate', ...(cookie ? { cookie } : {}) }
          const response = await rawRequest(target.port(), { ...request, headers })
          expect(JSON.stringify([...response.headers]) + response.body, label).not.toContain(EVIL_ORIGIN)
          expect(response.headers.get('set-cookie')?.join() ?? '', label).not.toMatch(/session-token=[^;]/)
          if (refused(name)) {
            expect(response.status, label).toBeGreaterThanOrEqual(400)
            continue
          }
          expect([302, 303], label).toContain(response.status)
          expect(JSON.stringify([...response.headers]), label).not.toContain(EVIL)
          expect(new URL(response.headers.get('location')![0]!, realOrigin()).origin, label).toBe(realOrigin())
          if (!cookie) continue
          // The flow sealed the path to come back to: its page is this site's, and so is its form.
          const step = new URL(response.headers.get('location')![0]!, realOrigin())
          expect(step.pathname, label).toBe(`${base}/step/reauthenticate`)
          const flow = response.headers.get('set-cookie')!.map((set) => set.split(';')[0]!).join('; ')
          const stepRequest = attack(step.pathname)
          const page = await rawRequest(target.port(), {
            ...stepRequest,
            headers: { ...stepRequest.headers, accept: 'text/html', cookie: `${cookie}; ${flow}` },
          })
          expect(page.status, label).toBe(200)
          expect(page.body, label).not.toContain(EVIL)
        }
      }
    })

    it(`keeps the real origin in the OAuth redirect_uri under ${name}`, async () => {
      const csrf = await rawRequest(target.port(), { target: `${base}/csrf`, headers: { host: host() } })
      const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string }
      const { target: path, headers } = attack(`${base}/signin/${target.oauthProvider}`)
      const response = await rawRequest(target.port(), {
        method: 'POST',
        target: path,
        headers: {
          ...headers,
          cookie: cookieHeader(csrf),
          'content-type': 'application/x-www-form-urlencoded',
          origin: realOrigin(), // as the browser sends it
        },
        body: new URLSearchParams({ csrfToken, callbackUrl: `${realOrigin()}/` }).toString(),
      })
      expect(JSON.stringify([...response.headers]) + response.body).not.toContain(EVIL_ORIGIN)
      if (refused(name)) return expect(response.status).toBeGreaterThanOrEqual(400)
      expect(response.status, JSON.stringify(response)).toBe(302)
      expect(JSON.stringify([...response.headers])).not.toContain(EVIL)
      const location = new URL(response.headers.get('location')![0]!)
      expect(location.searchParams.get('redirect_uri')).toBe(`${realOrigin()}${base}/callback/${target.oauthProvider}`)
    })
  }
}
