/**
 * The redirect proxy between Auth.js and authchart deployments (issue #48 item 7): during a switch
 * the proxy and the preview deployments often run different libraries, so each must read the
 * other's `state` (a JWE under the shared secret, salt `encodedState`, naming the callback URL the
 * proxy forwards to). Auth.js's own code seals and reads the states here: `@auth/core`'s `state`
 * check, and `@auth/core`'s `Auth` acting as the proxy. The attacks the proxy's origin rule stops
 * (test/security/redirect-proxy-takeover.test.ts) are repeated for Auth.js-sealed states.
 */
import { Auth as AuthjsAuth } from '@auth/core'
import { describe, expect, it } from 'vitest'
import { Client, ORIGIN, SECRET, testConfig } from '../fixtures/http.js'
import { appProvider } from '../oauth/helpers.js'
// Auth.js's own state check (internal to @auth/core: not in its exports map).
import { state as authjsState } from '../../node_modules/@auth/core/lib/actions/callback/oauth/checks.js'

const PROXY = 'https://proxy.authchart.test'
const ISSUER = 'https://op.example'
const logger = { debug() {}, warn() {}, error() {} }

/** Our deployment: the proxy itself (opened at PROXY) or a preview behind it (opened at ORIGIN). */
const ours = () =>
  testConfig({
    redirectProxyUrl: `${PROXY}/auth`,
    redirectProxyOrigins: [ORIGIN, 'https://preview.authjs.test'],
    providers: [appProvider(ISSUER, 'client_secret_basic', 'op')] as never,
  })

/** A state as an Auth.js preview deployment seals it for the proxy: `origin` is its callback URL. */
async function authjsSealed(origin: string, secret = SECRET): Promise<string> {
  const options = {
    provider: { id: 'op', checks: ['state'] },
    jwt: { secret },
    cookies: { state: { name: 'authjs.state', options: {} } },
    logger,
  }
  const created = await authjsState.create(options as never, origin)
  return created!.value
}

describe('our proxy and an Auth.js preview deployment', () => {
  it("forwards the callback to the deployment an Auth.js state names, with every parameter", async () => {
    const state = await authjsSealed('https://preview.authjs.test/api/auth/callback/op')
    const proxy = new Client(ours(), PROXY)
    const forwarded = await proxy.send({ path: '/callback/op', query: { code: 'the-code', state, iss: ISSUER } })
    expect(forwarded.status).toBe(302)
    const next = new URL(forwarded.headers.get('location')!)
    expect(`${next.origin}${next.pathname}`).toBe('https://preview.authjs.test/api/auth/callback/op')
    expect(Object.fromEntries(next.searchParams)).toEqual({ code: 'the-code', state, iss: ISSUER })
  })

  it('refuses an Auth.js state sealed under another secret, and one naming an origin off the allowlist', async () => {
    for (const state of [
      await authjsSealed('https://preview.authjs.test/api/auth/callback/op', 'another-secret-that-is-long-enough-0123456789'),
      await authjsSealed('https://evil.example/api/auth/callback/op'),
    ]) {
      const proxy = new Client(ours(), PROXY)
      const refused = await proxy.send({ path: '/callback/op', query: { code: 'the-code', state, iss: ISSUER } })
      expect(refused.headers.get('location')).toBe(`${PROXY}/auth/error?error=Configuration`)
    }
  })

  it("still reads the state an authchart preview of the previous version sealed", async () => {
    const { sealValue } = await import('../../core/engine/envelope.js')
    const { PROXY_STATE_SALT } = await import('../../core/flows/oauth/flow.js')
    const state = await sealValue({ origin: `${ORIGIN}/auth/callback/op`, random: 'r' }, { secrets: [SECRET], salt: PROXY_STATE_SALT, at: Math.floor(Date.now() / 1000) })
    const forwarded = await new Client(ours(), PROXY).send({ path: '/callback/op', query: { code: 'c', state } })
    expect(new URL(forwarded.headers.get('location')!).pathname).toBe('/auth/callback/op')
  })
})

describe('an Auth.js proxy and our preview deployment', () => {
  /** Starts a sign-in on our preview deployment; the `state` it sends the provider. */
  async function ourState(): Promise<string> {
    const app = new Client({
      ...ours(),
      // Plain OAuth with its endpoints written out: the sign-in starts without a discovery document.
      providers: [
        {
          id: 'op',
          name: 'OP',
          type: 'oauth',
          clientId: 'op',
          clientSecret: 'secret',
          authorization: { url: `${ISSUER}/authorize` },
          token: { url: `${ISSUER}/token` },
          userinfo: { url: `${ISSUER}/userinfo` },
        },
      ],
    } as never)
    const start = await app.send({ path: '/signin/op', body: { csrfToken: await app.csrfToken() } })
    const url = new URL(start.headers.get('location')!)
    expect(url.searchParams.get('redirect_uri')).toBe(`${PROXY}/auth/callback/op`)
    return url.searchParams.get('state')!
  }

  it("seals a state Auth.js's own check decodes to our callback URL", async () => {
    const decoded = await authjsState.decode(await ourState(), { jwt: { secret: SECRET }, logger } as never)
    expect(decoded.origin).toBe(`${ORIGIN}/auth/callback/op`)
  })

  it("is forwarded to by @auth/core's Auth acting as the proxy", async () => {
    const state = await ourState()
    const answer = await AuthjsAuth(new Request(`${PROXY}/auth/callback/op?code=the-code&state=${encodeURIComponent(state)}`), {
      secret: SECRET,
      trustHost: true,
      basePath: '/auth',
      redirectProxyUrl: `${PROXY}/auth`,
      logger,
      providers: [{ id: 'op', name: 'OP', type: 'oidc', issuer: ISSUER, clientId: 'op', clientSecret: 'secret' }],
    })
    expect(answer.status).toBe(302)
    const next = new URL(answer.headers.get('location')!)
    expect(`${next.origin}${next.pathname}`).toBe(`${ORIGIN}/auth/callback/op`)
    expect(next.searchParams.get('state')).toBe(state)
  })
})
