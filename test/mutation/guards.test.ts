/**
 * The recent-authentication guards of the Next.js and Hono integrations, and the origin check of
 * the Next.js server actions, attacks first: each guard keeps the policy it was given (a per-route
 * `maxAge` shorter than the default refuses a proof the default would accept), a server component
 * sends only to a path of this site, and a server action compares the request's `Origin` with the
 * site's own, never with itself (an echoed `Origin` lets every cross-site form through).
 */
import { encode } from '@auth/core/jwt'
import { Hono } from 'hono'
import { NextRequest } from 'next/server.js'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

/** Next's request scope as a server component or action sees it: headers, cookie jar, redirect. */
const scope = vi.hoisted(() => ({ headers: new Headers(), jar: new Map<string, string>(), redirects: [] as string[], headersRead: 0 }))
vi.mock('next/headers.js', () => ({
  headers: async () => {
    scope.headersRead++
    return scope.headers
  },
  cookies: async () => ({
    toString: () => [...scope.jar].map(([name, value]) => `${name}=${value}`).join('; '),
    set: (name: string, value: string) => void scope.jar.set(name, value),
  }),
}))
vi.mock('next/dist/client/components/navigation.react-server.js', () => ({
  redirect: (url: string) => {
    scope.redirects.push(url)
    throw Object.assign(new Error('NEXT_REDIRECT'), { url })
  },
}))

import NextAuth from '../../integrations/next/index.js'
import { isSitePath } from '../../integrations/next/recent-auth.js'
import { authHandler, initAuthConfig, requireRecentAuth } from '../../integrations/hono/index.js'
import { credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { stepUp } from '../../core/step-up.js'

const HOST = 'app.example:8443'
const SESSION = 'authjs.session-token'
const nextConfig = () => ({ secret: SECRET, trustHost: true, logger: spyLogger(), providers: [credentialsProvider()], stepUp: stepUp() })
const now = () => Math.floor(Date.now() / 1000)
/** When the factor of the newest cookie made by {@link provenAgo} was proven. */
let proven = 0
const provenAgo = async (seconds: number) => {
  proven = now() - seconds
  return encode({ token: { sub: 'alice', name: 'Alice', fva: { pwd: proven } }, secret: SECRET, salt: SESSION })
}
const reauthentication = (base: string, path: string) =>
  `http://${HOST}${base}/reauthenticate?callbackUrl=${encodeURIComponent(path)}&factors=hwk+otp+pwd+email+fed`

/** Runs `act` in a request scope with `headers` and `cookies`; its outcome, or Next's redirect. */
async function inScope<T>(headers: Record<string, string>, cookies: Record<string, string>, act: () => Promise<T>) {
  scope.headers = new Headers({ host: HOST, ...headers })
  scope.jar = new Map(Object.entries(cookies))
  scope.redirects = []
  return act().then(
    (value) => ({ value }),
    (error: Error & { url?: string; type?: string }) => (error.message === 'NEXT_REDIRECT' ? { redirect: error.url } : { error }),
  )
}

beforeEach(() => {
  scope.headersRead = 0
})
afterEach(() => {
  vi.unstubAllEnvs()
})

describe('isSitePath', () => {
  it.each(['/', '/settings', '/settings?tab=keys#a', '/a//b', '/%2F%2Fevil.example'])('takes %j', (path) => expect(isSitePath(path)).toBe(true))

  it.each(['//evil.example', '/\\evil.example', '/\t/evil.example', '/\n/evil.example', '/\t/exa mple', 'settings', '', 'https://evil.example/', 'javascript:alert(1)'])(
    'refuses %j',
    (path) => expect(isSitePath(path)).toBe(false),
  )

  it('refuses what is no string', () => {
    for (const value of [undefined, null, 1, ['/settings'], { toString: () => '/settings' }]) expect(isSitePath(value)).toBe(false)
  })
})

describe('the Next.js guard in a server component', () => {
  it("keeps the action's own maxAge: a proof two minutes old passes the default and not maxAge 60", async () => {
    const { requireRecentAuth: guard } = NextAuth(nextConfig())
    const cookie = { [SESSION]: await provenAgo(120) }
    const passed = await inScope({}, cookie, () => guard({ returnTo: '/settings' }))
    expect(passed).toEqual({ value: { ok: true, verifiedAt: proven } })
    const refused = await inScope({}, cookie, () => guard({ returnTo: '/settings?tab=keys', maxAge: 60 }))
    expect(refused).toEqual({ redirect: reauthentication('/api/auth', '/settings?tab=keys') })
  })

  it("keeps the action's own factors", async () => {
    const { requireRecentAuth: guard } = NextAuth(nextConfig())
    const refused = await inScope({}, { [SESSION]: await provenAgo(5) }, () => guard({ returnTo: '/settings', factors: ['hwk'] }))
    expect(refused).toEqual({ redirect: `http://${HOST}/api/auth/reauthenticate?callbackUrl=%2Fsettings&factors=hwk` })
  })

  it('sends a signed-out request to sign in, back to returnTo', async () => {
    const { requireRecentAuth: guard } = NextAuth(nextConfig())
    expect(await inScope({}, {}, () => guard({ returnTo: '/settings' }))).toEqual({ redirect: `http://${HOST}/api/auth/signin?callbackUrl=%2Fsettings` })
  })

  it('refuses a returnTo off the site before reading the request', async () => {
    const { requireRecentAuth: guard } = NextAuth(nextConfig())
    const outcome = await inScope({}, { [SESSION]: await provenAgo(5) }, () => guard({ returnTo: '//evil.example/settings' }))
    expect((outcome as { error: Error }).error).toBeInstanceOf(TypeError)
    expect(scope.headersRead).toBe(0)
    expect(scope.redirects).toEqual([])
  })
})

describe('the Next.js guard with the request', () => {
  it("keeps the route's own maxAge", async () => {
    const { requireRecentAuth: guard } = NextAuth(nextConfig())
    const request = new NextRequest('http://localhost:3000/settings?tab=keys', { headers: { host: HOST, accept: 'text/html', cookie: `${SESSION}=${await provenAgo(120)}` } })
    expect(await guard(request)).toEqual({ ok: true, verifiedAt: proven })
    const refused = (await guard(request, { maxAge: 60 })) as Response
    expect(refused.status).toBe(303)
    expect(refused.headers.get('location')).toBe(reauthentication('/api/auth', '/settings?tab=keys'))
  })
})

describe('the Next.js server actions', () => {
  const signIn = (headers: Record<string, string>) =>
    inScope(headers, {}, () => NextAuth(nextConfig()).signIn('credentials', { username: 'alice', password: 'wonderland', redirectTo: '/home' }))

  it("refuses a cross-site action by its Origin, never taking the request's Origin as the site's", async () => {
    const outcome = await signIn({ origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' })
    expect((outcome as { error: { type?: string } }).error?.type).toBe('MissingCSRF')
    expect([...scope.jar.keys()]).toEqual([])
  })

  it('refuses an action from the Host over another scheme, and signs in from the site itself', async () => {
    expect(((await signIn({ origin: `https://${HOST}` })) as { error: { type?: string } }).error?.type).toBe('MissingCSRF')
    const signedIn = await signIn({ origin: `http://${HOST}` })
    expect(signedIn).toEqual({ redirect: `http://${HOST}/home` })
    expect([...scope.jar.keys()]).toContain(SESSION)
  })

  it('takes the origin AUTH_URL pins, and refuses the Host the request names instead', async () => {
    vi.stubEnv('AUTH_URL', 'https://pinned.example/api/auth')
    expect(((await signIn({ origin: `http://${HOST}` })) as { error: { type?: string } }).error?.type).toBe('MissingCSRF')
    expect(await signIn({ origin: 'https://pinned.example' })).toEqual({ redirect: 'https://pinned.example/home' })
  })

  it("reads the session an update acts on from the action's cookies", async () => {
    const update = () => NextAuth(nextConfig()).unstable_update({ user: { name: 'Alicia' } })
    const signedIn = await inScope({ origin: `http://${HOST}` }, { [SESSION]: await provenAgo(5) }, update)
    expect((signedIn as { value: { user?: { name?: string } } | null }).value?.user?.name).toBe('Alice')
    expect(await inScope({ origin: `http://${HOST}` }, {}, update)).toEqual({ value: null })
  })

  it('sends an unknown provider to the sign-in page, back to the page the action came from', async () => {
    const outcome = await inScope({ referer: `http://${HOST}/pricing` }, {}, () => NextAuth(nextConfig()).signIn('nope'))
    expect(outcome).toEqual({ redirect: `http://${HOST}/api/auth/signin?callbackUrl=${encodeURIComponent(`http://${HOST}/pricing`)}` })
  })
})

describe('the Hono guard', () => {
  const app = (policy: Parameters<typeof requireRecentAuth>[0]) => {
    const hono = new Hono()
    hono.use('*', initAuthConfig(() => ({ ...nextConfig(), basePath: '/api/auth' })))
    hono.use('/api/auth/*', authHandler())
    hono.get('/settings', requireRecentAuth(policy), (c) => c.json(c.get('recentAuth')))
    return hono
  }
  const get = async (hono: Hono, seconds: number, headers: Record<string, string> = {}) =>
    hono.request(`http://${HOST}/settings?tab=keys`, { headers: { host: HOST, accept: 'text/html', cookie: `${SESSION}=${await provenAgo(seconds)}`, ...headers } })

  it("keeps the route's own maxAge: a proof two minutes old passes the default and not maxAge 60", async () => {
    const passed = await get(app(undefined), 120)
    expect(passed.status).toBe(200)
    expect(await passed.json()).toEqual({ ok: true, verifiedAt: proven })
    const refused = await get(app({ maxAge: 60 }), 120)
    expect(refused.status).toBe(303)
    expect(refused.headers.get('location')).toBe(reauthentication('/api/auth', '/settings?tab=keys'))
  })

  it('builds the re-authentication URL on the Host, never on the Origin the request sends', async () => {
    const refused = await get(app({ maxAge: 60 }), 120, { origin: 'https://attacker.example' })
    expect(refused.headers.get('location')).toBe(reauthentication('/api/auth', '/settings?tab=keys'))
  })
})
