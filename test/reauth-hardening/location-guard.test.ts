/**
 * Issue 48, item 2, at the response layer over HTTP: whatever produced it (here an application's
 * `redirect` callback that returns the URL it is given, a common mistake), no `Location` we write
 * starts with `//` or `/\`, which a browser follows to another host. Every route of the routing
 * table is asked, signed out and signed in, with such a callback URL; the guard writes the base
 * URL instead and logs why.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig, customFetch } from '../../core/index.js'
import { routingTable, type Route } from '../../core/http/routes.js'
import { encodeLocation, isSchemeRelative } from '../../core/http/dispatch.js'
import Email from '../../providers/email.js'
import OAuth from '../../providers/oauth.js'
import OIDC from '../../providers/oidc.js'
import Passkey from '../../providers/passkey.js'
import { Client, credentialsProvider, featureConfig, ORIGIN } from '../fixtures/http.js'
import { OFF_SITE_TARGETS, staysOnSite } from './fixture.js'

/** Where the OAuth providers' authorization requests go (the only other origin a redirect may name). */
const PROVIDER_ORIGIN = 'https://op.invalid'
const offline = { [customFetch]: () => Promise.reject(new TypeError('offline')) }

/** An application whose `redirect` callback trusts whatever URL it is given. */
function trustingApp(strategy: 'jwt' | 'database') {
  return featureConfig({
    adapter: MemoryAdapter(createMemoryStore()),
    session: { strategy },
    experimental: { enableWebAuthn: true },
    callbacks: { redirect: ({ url }) => url },
    providers: [
      credentialsProvider(),
      OAuth({ id: 'op', authorization: 'https://op.invalid/authorize', token: 'https://op.invalid/token', userinfo: 'https://op.invalid/me', clientId: 'c', clientSecret: 's', ...offline } as never),
      OIDC({ id: 'corp', issuer: 'https://op.invalid', clientId: 'c', clientSecret: 's', ...offline } as never),
      Email({ sendVerificationRequest: async () => {} }),
      Passkey(),
    ] as never,
  })
}

const providerIdOf = (config: ReturnType<typeof trustingApp>, type: string) =>
  assertConfig(config).providers.find((provider) => provider.type === type)?.id
const pathOf = (config: ReturnType<typeof trustingApp>, route: Route) =>
  `/${route.action}${route.provider === 'none' ? (route.action === 'step' ? '/reauthenticate' : '') : `/${providerIdOf(config, route.provider)}`}`

describe('no Location we write leaves the site', () => {
  for (const strategy of ['jwt', 'database'] as const) {
    it(`holds on every route, signed out and signed in (${strategy} sessions)`, async () => {
      const config = trustingApp(strategy)
      const routes = routingTable(assertConfig(config))
      const seen: string[] = []
      for (const target of OFF_SITE_TARGETS.slice(0, 3)) {
        for (const signedIn of [false, true]) {
          for (const route of routes) {
            const client = new Client(config)
            if (signedIn) await client.signIn({ username: 'alice', password: 'wonderland', callbackUrl: target })
            const csrfToken = await client.csrfToken()
            const fields = { callbackUrl: target, redirectTo: target, username: 'alice', password: 'wonderland', email: 'a@example.com' }
            const response =
              route.method === 'GET'
                ? await client.send({ path: pathOf(config, route), query: { callbackUrl: target }, headers: { accept: 'text/html' } })
                : await client.send({ path: pathOf(config, route), body: { csrfToken, ...fields }, headers: { accept: 'text/html' } })
            const location = response.headers.get('location')
            if (location === null) continue
            seen.push(`${route.method} ${pathOf(config, route)}`)
            // On the site, or at a configured provider's authorization endpoint; never scheme-relative.
            const label = `${route.method} ${pathOf(config, route)} (${signedIn ? 'signed in' : 'signed out'}) → ${location}`
            expect(isSchemeRelative(location), label).toBe(false)
            expect(staysOnSite(location) || new URL(location).origin === PROVIDER_ORIGIN, label).toBe(true)
          }
        }
      }
      // The sweep reached the redirects that carry the callback URL.
      expect(seen).toEqual(expect.arrayContaining(['POST /callback/credentials', 'POST /signout']))
    })
  }

  it('writes the base URL instead, and logs the reason', async () => {
    const config = trustingApp('jwt')
    const client = new Client(config)
    const signedIn = await client.signIn({ username: 'alice', password: 'wonderland', callbackUrl: '//evil.example/phish' })
    expect(signedIn.headers.get('location')).toBe(ORIGIN)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining('//evil.example/phish') }))
  })
})

describe('encodeLocation', () => {
  it('never returns a scheme-relative target, and leaves the rest as it was', () => {
    for (const unsafe of ['//evil.example', '/\\evil.example', '\\\\evil.example', '\\/evil.example', '/\t/evil.example', ' //evil.example', '\n//evil.example']) {
      expect(staysOnSite(encodeLocation(unsafe)), JSON.stringify(unsafe)).toBe(true)
      expect(encodeLocation(unsafe, { base: ORIGIN, logger: { error: () => {} } })).toBe(ORIGIN)
    }
    for (const safe of ['/dashboard', '/%5Cevil', `${ORIGIN}//evil.example`, 'https://op.example/authorize?x=1', '/a//b']) {
      expect(encodeLocation(safe)).toBe(safe)
    }
  })
})
