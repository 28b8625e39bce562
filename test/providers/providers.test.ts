/**
 * The built-in OAuth providers, each signing in against a loopback server that speaks its
 * provider's protocol (or, for Google, the real OpenID Provider). The providers keep their real
 * URLs: `customFetch` and the test's "browser" route those origins to loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { customFetch } from '../../core/index.js'
import GitHub from '../../providers/github.js'
import Google from '../../providers/google.js'
import OAuth from '../../providers/oauth.js'
import OIDC from '../../providers/oidc.js'
import Twitter from '../../providers/twitter.js'
import VK, { VK_API_VERSION, withApiVersion } from '../../providers/vk.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'
import {
  loopbackFetch,
  startOAuth2Server,
  toLoopback,
  type OAuth2ServerOptions,
  type RunningOAuth2Server,
} from '../fixtures/oauth2-server.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { CLIENT_SECRET, opClient, signInThroughProvider } from '../oauth/helpers.js'

const servers: { close(): Promise<void> }[] = []
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
})

async function server(options: Omit<OAuth2ServerOptions, 'clientId' | 'clientSecret'>) {
  const running = await startOAuth2Server({ clientId: 'app-id', clientSecret: CLIENT_SECRET, ...options })
  servers.push(running)
  return running
}

/** Signs in through `providerId`, the browser visiting `routes` origins on loopback. */
async function signIn(client: Client, providerId: string, routes: Record<string, string>) {
  const csrfToken = await client.csrfToken()
  const start = await client.send({ path: `/signin/${providerId}`, body: { csrfToken } })
  const authorizationUrl = new URL(start.headers.get('location')!)
  const visit = await fetch(toLoopback(authorizationUrl.href, routes), { redirect: 'manual' })
  const back = new URL(visit.headers.get('location') ?? `${ORIGIN}/no-redirect-${visit.status}`)
  const callback = await client.send({
    path: back.pathname.slice('/auth'.length),
    query: Object.fromEntries(back.searchParams),
  })
  return { authorizationUrl, callback }
}

const credentials = { clientId: 'app-id', clientSecret: CLIENT_SECRET }

describe('GitHub', () => {
  let github: RunningOAuth2Server
  let routes: Record<string, string>
  beforeAll(async () => {
    github = await server({
      clientAuth: 'client_secret_basic',
      authorizePath: '/login/oauth/authorize',
      tokenPath: '/login/oauth/access_token',
      api: {
        '/user': () => ({ id: 583231, login: 'octocat', name: null, email: null, avatar_url: 'https://gh/octo.png' }),
        '/user/emails': () => [
          { email: 'secondary@example.com', primary: false, verified: true },
          { email: 'Octo@Example.com', primary: true, verified: true },
        ],
      },
    })
    routes = { 'https://github.com': github.origin, 'https://api.github.com': github.origin }
  })

  it('signs in with PKCE, taking the hidden e-mail address from /user/emails', async () => {
    const client = new Client(testConfig({ providers: [GitHub({ ...credentials, [customFetch]: loopbackFetch(routes) })] }))
    const { authorizationUrl, callback } = await signIn(client, 'github', routes)
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe('https://github.com/login/oauth/authorize')
    expect(authorizationUrl.searchParams.get('scope')).toBe('read:user user:email')
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({
      user: { name: 'octocat', email: 'octo@example.com', image: 'https://gh/octo.png' },
    })
  })

  it('signs in against GitHub Enterprise Server at its base URL', async () => {
    const enterprise = await server({
      clientAuth: 'client_secret_basic',
      authorizePath: '/login/oauth/authorize',
      tokenPath: '/login/oauth/access_token',
      api: { '/api/v3/user': () => ({ id: 7, login: 'corp-dev', name: 'Corp Dev', email: 'dev@corp.example' }) },
    })
    const client = new Client(testConfig({ providers: [GitHub({ ...credentials, enterprise: { baseUrl: enterprise.origin } })] }))
    const { callback } = await signIn(client, 'github', {})
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { name: 'Corp Dev', email: 'dev@corp.example' } })
  })
})

describe('X (Twitter), OAuth 2.0', () => {
  let x: RunningOAuth2Server
  let routes: Record<string, string>
  let me: () => unknown
  beforeAll(async () => {
    x = await server({
      clientAuth: 'client_secret_basic',
      authorizePath: '/i/oauth2/authorize',
      tokenPath: '/2/oauth2/token',
      api: { '/2/users/me': () => me() },
    })
    routes = { 'https://x.com': x.origin, 'https://api.x.com': x.origin }
  })
  const provider = (extra: Record<string, unknown> = {}) =>
    Twitter({ ...credentials, version: '2.0', [customFetch]: loopbackFetch(routes), ...extra })

  it('signs in with PKCE and state, asking for user.fields and the pinned tweet', async () => {
    me = () => ({
      data: {
        id: '2244994945',
        name: 'X Dev',
        username: 'XDevelopers',
        profile_image_url: 'https://pbs/x.png',
        pinned_tweet_id: '1',
        entities: { description: { hashtags: [{ start: 0, end: 4, tag: 'dev' }] } },
        verified: true,
      },
      includes: { tweets: [{ id: '1', text: 'hello' }] },
    })
    const client = new Client(testConfig({ providers: [provider()] }))
    const { authorizationUrl, callback } = await signIn(client, 'twitter', routes)
    expect(authorizationUrl.searchParams.has('state')).toBe(true)
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorizationUrl.searchParams.get('scope')).toBe('users.read tweet.read offline.access')
    expect(callback.headers.get('location')).toBe(ORIGIN)
    const userinfo = x.requests.findLast((r) => r.path === '/2/users/me')!
    expect(userinfo.query.get('expansions')).toBe('pinned_tweet_id')
    expect(userinfo.query.get('user.fields')?.split(',')).toEqual(
      expect.arrayContaining(['profile_image_url', 'description', 'entities', 'location', 'url', 'verified']),
    )
    const { body } = await client.session()
    expect(body).toMatchObject({ user: { name: 'X Dev', image: 'https://pbs/x.png' } })
    expect((body as { user: Record<string, unknown> }).user.email ?? null, 'X gives no e-mail address').toBeNull()
  })

  it('refuses a profile that does not have the documented shape, with no session', async () => {
    me = () => ({ data: { id: 42, name: 'No Username' } })
    const config = testConfig({ providers: [provider()] })
    const client = new Client(config)
    const { callback } = await signIn(client, 'twitter', routes)
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'OAuthProfileParseError' }))
    expect((await client.session()).body).toBeNull()
  })

  it('rejects OAuth 1.0a, which it does not implement', () => {
    expect(() => Twitter({ ...credentials, version: '1.0A' as never })).toThrow(/OAuth 1.0a/)
  })
})

describe('VK', () => {
  let vk: RunningOAuth2Server
  let routes: Record<string, string>
  beforeAll(async () => {
    vk = await server({
      clientAuth: 'client_secret_post',
      authorizePath: '/authorize',
      tokenPath: '/access_token',
      // VK answers without token_type, and with the e-mail address and user id.
      tokenFields: { token_type: null, email: 'ivan@example.com', user_id: 1 },
      api: {
        '/method/users.get': () => ({
          response: [
            { id: 1, first_name: 'Ivan', last_name: 'Petrov', is_closed: false, can_access_closed: true, photo_100: 'https://vk/1.jpg', sex: 2 },
          ],
        }),
      },
    })
    routes = { 'https://oauth.vk.com': vk.origin, 'https://api.vk.com': vk.origin }
  })

  it(`signs in calling every endpoint with v=${VK_API_VERSION}, the e-mail address from the token response`, async () => {
    const client = new Client(testConfig({ providers: [VK({ ...credentials, [customFetch]: loopbackFetch(routes) })] }))
    const before = vk.requests.length
    const { callback } = await signIn(client, 'vk', routes)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    const calls = vk.requests.slice(before)
    expect(calls.map((r) => r.path)).toEqual(['/authorize', '/access_token', '/method/users.get'])
    for (const call of calls) expect(call.query.get('v')).toBe(VK_API_VERSION)
    expect(calls[1]!.body.get('client_secret'), 'client_secret_post').toBe(CLIENT_SECRET)
    expect((await client.session()).body).toMatchObject({
      user: { name: 'Ivan Petrov', email: 'ivan@example.com', image: 'https://vk/1.jpg' },
    })
  })

  it('keeps the version of overridden URLs and adds it where missing', async () => {
    const provider = VK({
      ...credentials,
      authorizationUrl: 'https://oauth.vk.com/authorize?scope=email&v=5.131',
      accessTokenUrl: 'https://oauth.vk.com/access_token',
      requestTokenUrl: 'https://oauth.vk.com/request_token',
      profileUrl: 'https://api.vk.com/method/users.get?fields=photo_100,sex&v=5.131',
    }) as unknown as Record<string, unknown>
    expect(new URL(provider.authorization as string).searchParams.get('v')).toBe('5.131')
    expect(new URL((provider.token as { url: string }).url).searchParams.get('v')).toBe(VK_API_VERSION)
    expect(new URL(provider.requestTokenUrl as string).searchParams.get('v')).toBe(VK_API_VERSION)
    expect(new URL(provider.userinfo as string).searchParams.get('v')).toBe('5.131')
    expect(withApiVersion('https://api.vk.com/method/x?v=1')).toBe('https://api.vk.com/method/x?v=1')
  })
})

describe('Google and the generic OIDC and OAuth providers', () => {
  let op: RunningOidcProvider
  beforeAll(async () => {
    op = await startOidcProvider({
      clients: [await opClient('client_secret_basic', 'google'), await opClient('client_secret_basic', 'corp')],
    })
    servers.push(op)
  })

  it('signs in with Google (discovery from its issuer, profile from the ID token)', async () => {
    const client = new Client(testConfig({ providers: [Google({ clientId: 'google', clientSecret: CLIENT_SECRET, issuer: op.issuer })] }))
    const { callback } = await signInThroughProvider(client, 'google')
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { name: OP_ACCOUNT.name, email: 'alice@example.com' } })
  })

  it('signs in with a generic OIDC provider that takes the profile from userinfo', async () => {
    const provider = OIDC({ id: 'corp', issuer: op.issuer, clientId: 'corp', clientSecret: CLIENT_SECRET, idToken: false })
    const client = new Client(testConfig({ providers: [provider] }))
    const { callback } = await signInThroughProvider(client, 'corp')
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { name: OP_ACCOUNT.name } })
  })

  it('signs in with a generic OAuth 2 provider given explicit endpoints', async () => {
    const acme = await server({
      clientAuth: 'client_secret_basic',
      authorizePath: '/oauth/authorize',
      tokenPath: '/oauth/token',
      api: { '/api/me': () => ({ id: 99, name: 'Acme User', email: 'user@acme.example' }) },
    })
    const provider = OAuth({
      id: 'acme',
      authorization: `${acme.origin}/oauth/authorize`,
      token: `${acme.origin}/oauth/token`,
      userinfo: `${acme.origin}/api/me`,
      ...credentials,
    })
    const client = new Client(testConfig({ providers: [provider] }))
    const { callback } = await signIn(client, 'acme', {})
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { name: 'Acme User', email: 'user@acme.example' } })
  })
})
