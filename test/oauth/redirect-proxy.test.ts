/**
 * The redirect proxy (reference §5.1): preview deployments share one registered callback. The
 * proxy receives the provider's callback and forwards it to the deployment whose origin is sealed
 * in `state`, which then completes the sign-in. Only origins sealed with the shared secret are
 * followed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'
import { startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient } from './helpers.js'

const PROXY = 'https://proxy.authchart.test'
let op: RunningOidcProvider

beforeAll(async () => {
  op = await startOidcProvider({
    clients: [await opClient('client_secret_basic', 'op', { redirect_uris: [`${PROXY}/auth/callback/op`] })],
  })
})
afterAll(() => op?.close())

const config = () =>
  testConfig({
    redirectProxyUrl: `${PROXY}/auth`,
    // The deployments the proxy may forward to (test/security/redirect-proxy-takeover.test.ts).
    redirectProxyOrigins: [ORIGIN],
    providers: [appProvider(op.issuer, 'client_secret_basic', 'op')] as never,
  })

describe('the redirect proxy', () => {
  it('forwards the callback to the deployment that started the sign-in, which completes it', async () => {
    const app = new Client(config())
    const proxy = new Client(config(), PROXY)
    const csrfToken = await app.csrfToken()
    const start = await app.send({ path: '/signin/op', body: { csrfToken } })
    const authorizationUrl = new URL(start.headers.get('location')!)
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${PROXY}/auth/callback/op`)
    // The proxy needs state to know where to forward: it is on even though checks default to PKCE.
    expect(authorizationUrl.searchParams.get('state')).toMatch(/^ey/)

    const answer = await visitProvider(authorizationUrl.href, `${PROXY}/auth/callback/`)
    const forwarded = await proxy.send({ path: '/callback/op', query: Object.fromEntries(answer.url.searchParams) })
    expect(forwarded.status).toBe(302)
    const next = new URL(forwarded.headers.get('location')!)
    expect(`${next.origin}${next.pathname}`).toBe(`${ORIGIN}/auth/callback/op`)
    expect(Object.fromEntries(next.searchParams)).toEqual(Object.fromEntries(answer.url.searchParams))
    expect((await proxy.session()).body, 'the proxy signs no one in').toBeNull()

    const done = await app.send({ path: '/callback/op', query: Object.fromEntries(next.searchParams) })
    expect(done.headers.get('location')).toBe(ORIGIN)
    expect((await app.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
  })

  it('refuses a state it cannot open, instead of forwarding anywhere', async () => {
    const proxy = new Client(config(), PROXY)
    const response = await proxy.send({ path: '/callback/op', query: { code: 'x', state: 'forged-state', iss: op.issuer } })
    expect(response.headers.get('location')).toBe(`${PROXY}/auth/error?error=Configuration`)
    expect(proxy.config.logger!.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'InvalidCheck' }))
  })
})
