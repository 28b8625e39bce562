/**
 * OIDC sign-in end to end against a real OpenID Provider on 127.0.0.1: every client
 * authentication method, with and without PKCE and nonce, under JWT and database sessions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryAdapter, createMemoryStore } from '../../adapters/memory.js'
import type { OAuthCheck } from '../../core/oauth/provider.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { AUTH_METHODS, appProvider, opClient, signInThroughProvider } from './helpers.js'

const CHECKS: Record<string, OAuthCheck[]> = {
  'PKCE and nonce': ['pkce', 'nonce'],
  'PKCE only': ['pkce'],
  'nonce only': ['nonce'],
  'state only (no PKCE, no nonce)': ['state'],
}

const providerIdOf = (method: string, variant: string) =>
  `op-${method}-${Object.keys(CHECKS).indexOf(variant)}`

let op: RunningOidcProvider

beforeAll(async () => {
  const clients = []
  for (const method of AUTH_METHODS) {
    for (const variant of Object.keys(CHECKS)) clients.push(await opClient(method, providerIdOf(method, variant)))
  }
  clients.push(
    await opClient('client_secret_basic', 'op-form-post', { response_modes: ['form_post'] } as never),
  )
  op = await startOidcProvider({ clients })
})
afterAll(() => op?.close())

function providers() {
  const list = AUTH_METHODS.flatMap((method) =>
    Object.entries(CHECKS).map(([variant, checks]) =>
      appProvider(op.issuer, method, providerIdOf(method, variant), { checks }),
    ),
  )
  list.push(
    appProvider(op.issuer, 'client_secret_basic', 'op-form-post', {
      authorization: { params: { response_mode: 'form_post' } },
    }),
  )
  return list
}

describe.each(['jwt', 'database'] as const)('OIDC sign-in with %s sessions', (strategy) => {
  // A fresh store per sign-in: every provider here knows the same e-mail address, and linking a
  // second provider to it is refused (OAuthAccountNotLinked), as it should be.
  let store = createMemoryStore()
  const config = () =>
    testConfig({
      providers: providers() as never,
      session: { strategy },
      ...(strategy === 'database' ? { adapter: MemoryAdapter(store) } : {}),
    })

  describe.each(AUTH_METHODS)('client authentication %s', (method) => {
    it.each(Object.keys(CHECKS))('signs the user in with %s', async (variant) => {
      const checks = CHECKS[variant]!
      store = createMemoryStore()
      const client = new Client(config())
      const providerId = providerIdOf(method, variant)
      const { authorizationUrl, callback } = await signInThroughProvider(client, providerId, {
        callbackUrl: `${ORIGIN}/dashboard`,
      })

      expect(authorizationUrl.searchParams.has('code_challenge')).toBe(checks.includes('pkce'))
      expect(authorizationUrl.searchParams.has('nonce')).toBe(checks.includes('nonce'))
      expect(authorizationUrl.searchParams.has('state')).toBe(checks.includes('state'))
      expect(callback.status).toBe(302)
      expect(callback.headers.get('location')).toBe(`${ORIGIN}/dashboard`)

      const { body } = await client.session()
      expect(body).toMatchObject({
        user: { name: OP_ACCOUNT.name, email: 'alice@example.com', image: OP_ACCOUNT.picture },
      })
      if (strategy === 'database') {
        const account = [...store.accounts.values()].find((a) => a.provider === providerId)
        expect(account).toMatchObject({ providerAccountId: OP_ACCOUNT.sub, type: 'oidc' })
        expect(account?.access_token).toEqual(expect.any(String))
        expect(account?.expires_at).toBeGreaterThan(Date.now() / 1000)
      }
    })
  })

  it('accepts the response_mode=form_post callback, whose envelope cookie is SameSite=None', async () => {
    store = createMemoryStore()
    const client = new Client(config())
    const csrfToken = await client.csrfToken()
    const start = await client.send({ path: '/signin/op-form-post', body: { csrfToken } })
    const cookie = start.headers.getSetCookie().find((c) => c.startsWith('__Secure-authjs.state='))
    expect(cookie).toMatch(/SameSite=None/i)
    expect(cookie).toMatch(/Secure/)

    const { callback } = await signInThroughProvider(client, 'op-form-post')
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })
})

describe('cookie overrides', () => {
  it('carry the sealed flow in the state cookie as configured; pkceCodeVerifier and nonce overrides are accepted', async () => {
    const config = testConfig({
      providers: [appProvider(op.issuer, 'client_secret_basic', providerIdOf('client_secret_basic', 'PKCE and nonce'), { checks: ['pkce', 'nonce'] })] as never,
      cookies: {
        state: { name: 'app.oauth-flow', options: { httpOnly: true, sameSite: 'lax', path: '/auth', secure: true } },
        pkceCodeVerifier: { name: 'app.pkce' },
        nonce: { name: 'app.nonce' },
      },
    })
    const client = new Client(config)
    const providerId = providerIdOf('client_secret_basic', 'PKCE and nonce')
    const csrfToken = await client.csrfToken()
    const start = await client.send({ path: `/signin/${providerId}`, body: { csrfToken } })
    const set = start.headers.getSetCookie()
    expect(set.find((c) => c.startsWith('app.oauth-flow='))).toMatch(/Path=\/auth/)
    expect(set.some((c) => c.startsWith('app.pkce=') || c.startsWith('app.nonce='))).toBe(false)

    const { callback } = await signInThroughProvider(client, providerId)
    expect(callback.headers.get('location')).toBe(ORIGIN)
    expect(callback.headers.getSetCookie().find((c) => c.startsWith('app.oauth-flow='))).toMatch(/Max-Age=0/)
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })
})
