/**
 * The CSRF flags of the routing table as requests meet them: every POST route refuses a post
 * without this browser's token, but the three that another party posts to (the provider's callback,
 * its back-channel logout, the passkey answer, each proven otherwise); every page with a form hands
 * out a token, and pages without one do not. Each route is asked through `Auth`, so a flag dropped
 * from (or added to) one route fails here by name.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig, Auth, customFetch } from '../../core/index.js'
import { routes, type Route } from '../../core/http/routes.js'
import Email from '../../providers/email.js'
import OAuth from '../../providers/oauth.js'
import OIDC from '../../providers/oidc.js'
import Passkey from '../../providers/passkey.js'
import { authRequest, credentialsProvider, testConfig } from '../fixtures/http.js'

const CSRF_COOKIE = '__Host-authjs.csrf-token'

/** Posted without a token by design: the caller proves itself another way (see core/http/routes.ts). */
const POSTS_WITHOUT_TOKEN = ['POST callback oauth', 'POST callback oidc', 'POST backchannel-logout oidc', 'POST callback webauthn']
/** Pages that show a form (sign-in, sign-out, the e-mail link, a step, the enrolment) and so hand out a token. */
const PAGES_WITH_TOKEN = ['GET csrf none', 'GET signin none', 'GET signout none', 'GET callback email', 'GET step none', 'GET two-factor none']

const offline = { [customFetch]: () => Promise.reject(new TypeError('offline')) }
const config = testConfig({
  adapter: MemoryAdapter(createMemoryStore()),
  experimental: { enableWebAuthn: true },
  providers: [
    credentialsProvider(),
    OAuth({ id: 'op', authorization: 'https://op.invalid/authorize', token: 'https://op.invalid/token', userinfo: 'https://op.invalid/me', clientId: 'c', clientSecret: 's', ...offline } as never),
    OIDC({ id: 'corp', issuer: 'https://op.invalid', clientId: 'c', clientSecret: 's', ...offline } as never),
    Email({ sendVerificationRequest: async () => {} }),
    Passkey(),
  ] as never,
})
const providerOfType = new Map(assertConfig(config).providers.map((p) => [p.type as string, p.id]))
const nameOf = (route: Route) => `${route.method} ${route.action} ${route.provider}`
const pathOf = (route: Route) => {
  const flow = route.action === 'step' ? '/signin-completion' : ''
  return `/auth/${route.action}${route.provider === 'none' ? flow : `/${providerOfType.get(route.provider)}`}`
}

/** Whether Auth answered a request as a missing CSRF token (Auth.js's error redirect, or 400 for a JSON route). */
function refusedForCsrf(response: Response, route: Route): boolean {
  const location = response.headers.get('location') ?? ''
  return location.includes('error=MissingCSRF') || (route.failure === 'json-null' && response.status === 400)
}

describe('the CSRF flags of the routing table, through Auth', () => {
  const posts = routes.filter((route) => route.method === 'POST')
  const gets = routes.filter((route) => route.method === 'GET')

  it('names every exception that exists (a stale list would hide a route)', () => {
    const names = routes.map(nameOf)
    expect(names).toEqual(expect.arrayContaining([...POSTS_WITHOUT_TOKEN, ...PAGES_WITH_TOKEN]))
  })

  it.each(posts.filter((route) => !POSTS_WITHOUT_TOKEN.includes(nameOf(route))).map((route) => [nameOf(route), route] as const))(
    '%s refuses a post without a token, before anything else runs',
    async (_name, route) => {
      const response = await Auth(authRequest({ path: pathOf(route), body: { username: 'alice', password: 'wonderland', email: 'a@example.com' } }), config)
      expect(refusedForCsrf(response, route), `${response.status} ${response.headers.get('location')}`).toBe(true)
      expect(response.headers.getSetCookie().some((c) => c.includes('session-token=') && !c.includes('Max-Age=0') && !c.includes('Expires=Thu, 01 Jan 1970'))).toBe(false)
    },
  )

  it.each(posts.filter((route) => POSTS_WITHOUT_TOKEN.includes(nameOf(route))).map((route) => [nameOf(route), route] as const))(
    '%s is not refused for want of a token (its caller is not our form)',
    async (_name, route) => {
      const response = await Auth(authRequest({ path: pathOf(route), body: { action: 'authenticate', data: '{}' } }), config)
      expect(refusedForCsrf(response, route), `${response.status} ${response.headers.get('location')}`).toBe(false)
    },
  )

  it.each(gets.map((route) => [nameOf(route), route] as const))('%s hands out a CSRF token only if it shows a form', async (name, route) => {
    const response = await Auth(authRequest({ path: pathOf(route), query: { action: 'authenticate' } }), config)
    const handsOut = response.headers.getSetCookie().some((c) => c.startsWith(`${CSRF_COOKIE}=`))
    expect(handsOut, `${response.status} ${response.headers.get('location')}`).toBe(PAGES_WITH_TOKEN.includes(name))
  })
})
