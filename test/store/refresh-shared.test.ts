/**
 * Refresh single-flight through a shared store: two configs, each with its own store object on
 * the same database (two instances, as far as the engine can tell), race 20 session reads with
 * the same expired access token. The real OpenID Provider sees one refresh grant; the result the
 * winner keeps for the others is sealed, so the store never holds a token in clear.
 */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import type { AuthStore } from '../../core/store/index.js'
import { postgresAuthStore } from '../../stores/postgres.js'
import { authRequest, Client, SECRET, setCookie, testConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
let op: RunningOidcProvider
const db = new PGlite()
const written: string[] = []

/** A store that records every value written to it. */
function recording(store: AuthStore): AuthStore {
  return { ...store, put: (key, value, ttl) => (written.push(`${key}=${value}`), store.put(key, value, ttl)) }
}

beforeAll(async () => {
  op = await startOidcProvider({
    clients: [await opClient('client_secret_basic', 'op')],
    refreshTokens: true,
    accessTokenTtl: 10,
  })
  await postgresAuthStore(db).migrate()
})
afterAll(async () => {
  await op?.close()
  await db.close()
})

const instance = () =>
  testConfig({
    providers: [appProvider(op.issuer, 'client_secret_basic', 'op', { refreshTokens: true })] as never,
    store: recording(postgresAuthStore(db)),
  })

describe('refresh single-flight through a shared store', () => {
  it('spends the refresh token once when 20 reads race over two instances, keeping only sealed results', async () => {
    const instances = [instance(), instance()]
    const client = new Client(instances[0]!)
    await signInThroughProvider(client, 'op')
    const cookie = client.jar.get(SESSION_COOKIE)!
    const before = (await decode({ token: cookie, secret: SECRET, salt: SESSION_COOKIE }))!.oauth as Record<string, string>
    const grants = op.grants.filter((g) => g.grant_type === 'refresh_token').length
    const rejected = op.rejectedRefreshes

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: cookie } }), instances[i % 2]!),
      ),
    )
    expect(op.grants.filter((g) => g.grant_type === 'refresh_token').length, 'one grant at the OP').toBe(grants + 1)
    expect(op.rejectedRefreshes, 'no replay of the spent refresh token').toBe(rejected)
    const accessTokens = new Set<string>()
    for (const response of responses) {
      expect(((await response.json()) as { error?: string }).error).toBeUndefined()
      const claim = (await decode({ token: setCookie(response, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE }))!
      accessTokens.add((claim.oauth as Record<string, string>).access_token!)
    }
    expect(accessTokens.size, 'every response carries the same new access token').toBe(1)

    const [fresh] = [...accessTokens]
    const results = written.filter((entry) => entry.startsWith('refresh:result:'))
    expect(results).toHaveLength(1)
    for (const entry of results) {
      expect(entry).not.toContain(before.refresh_token)
      expect(entry).not.toContain(fresh)
    }
  })

  it("never hands one user's refreshed tokens to another: a result is kept per refresh token", async () => {
    const instances = [instance(), instance()]
    const alice = new Client(instances[0]!)
    await signInThroughProvider(alice, 'op')
    const bob = new Client(instances[1]!)
    op.loginAs = 'bob'
    try {
      await signInThroughProvider(bob, 'op')
    } finally {
      op.loginAs = OP_ACCOUNT.sub as string
    }
    const bobClaims = await decode({ token: bob.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(bobClaims?.email, 'another person at the provider').toBe('bob@example.com')
    const grants = op.grants.filter((g) => g.grant_type === 'refresh_token').length
    const refreshed = async (cookie: string, config: (typeof instances)[number]) => {
      const response = await Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: cookie } }), config)
      expect(((await response.json()) as { error?: string }).error).toBeUndefined()
      return (await decode({ token: setCookie(response, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE }))!.oauth as Record<string, string>
    }
    const aliceTokens = await refreshed(alice.jar.get(SESSION_COOKIE)!, instances[0]!)
    const bobTokens = await refreshed(bob.jar.get(SESSION_COOKIE)!, instances[1]!)
    expect(op.grants.filter((g) => g.grant_type === 'refresh_token').length, 'a grant for each user').toBe(grants + 2)
    expect(bobTokens.access_token).not.toBe(aliceTokens.access_token)
    expect(bobTokens.refresh_token).not.toBe(aliceTokens.refresh_token)
  })
})
