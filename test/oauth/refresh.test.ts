/**
 * Built-in refresh-token rotation against the real OpenID Provider, which rotates refresh tokens
 * and refuses a spent one: an expired access token is refreshed on the session path, once, however
 * many requests arrive at the same time with the same cookie.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import { decode, encode } from '../../core/jwt.js'
import { authRequest, Client, SECRET, setCookie, testConfig } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from './helpers.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
let op: RunningOidcProvider

beforeAll(async () => {
  // Access tokens live 10 s: inside the 30 s leeway, so every read finds them due for a refresh.
  op = await startOidcProvider({
    clients: [await opClient('client_secret_basic', 'op')],
    refreshTokens: true,
    accessTokenTtl: 10,
  })
})
afterAll(() => op?.close())

const config = () =>
  testConfig({ providers: [appProvider(op.issuer, 'client_secret_basic', 'op', { refreshTokens: true })] as never })

interface OAuthClaim {
  provider: string
  access_token: string
  refresh_token?: string
  expires_at: number
}

const claimOf = async (cookie: string) =>
  (await decode({ token: cookie, secret: SECRET, salt: SESSION_COOKIE }))!.oauth as OAuthClaim

const refreshGrants = () => op.grants.filter((g) => g.grant_type === 'refresh_token').length

async function signedInCookie(cfg = config()): Promise<string> {
  const client = new Client(cfg)
  await signInThroughProvider(client, 'op')
  return client.jar.get(SESSION_COOKIE)!
}

const readSession = (cfg: ReturnType<typeof config>, cookie: string) =>
  Auth(authRequest({ path: '/auth/session', cookies: { [SESSION_COOKIE]: cookie } }), cfg)

describe('refresh-token rotation on the session path', () => {
  it('keeps the provider tokens in the session cookie only for providers that opt in', async () => {
    const claim = await claimOf(await signedInCookie())
    expect(claim).toMatchObject({ provider: 'op', access_token: expect.any(String), refresh_token: expect.any(String) })

    const plain = testConfig({ providers: [appProvider(op.issuer, 'client_secret_basic', 'op')] as never })
    expect(await claimOf(await signedInCookie(plain))).toBeUndefined()
  })

  it('refreshes an expired access token and reissues the cookie with the rotated refresh token', async () => {
    const cfg = config()
    const cookie = await signedInCookie(cfg)
    const before = await claimOf(cookie)
    const grants = refreshGrants()

    const response = await readSession(cfg, cookie)
    const body = (await response.json()) as { error?: string }
    expect(body).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(body.error).toBeUndefined()
    const after = await claimOf(setCookie(response, SESSION_COOKIE)!.value)
    expect(refreshGrants()).toBe(grants + 1)
    expect(after.access_token).not.toBe(before.access_token)
    expect(after.refresh_token).not.toBe(before.refresh_token)
    expect(after.expires_at).toBeGreaterThanOrEqual(before.expires_at)
  })

  it('spends the refresh token once when 20 requests arrive together with the same cookie', async () => {
    const cfg = config()
    const cookie = await signedInCookie(cfg)
    const grants = refreshGrants()
    const rejected = op.rejectedRefreshes

    const responses = await Promise.all(Array.from({ length: 20 }, () => readSession(cfg, cookie)))
    expect(refreshGrants(), 'one refresh at the provider').toBe(grants + 1)
    expect(op.rejectedRefreshes, 'no replay of a spent refresh token').toBe(rejected)
    const accessTokens = new Set<string>()
    for (const response of responses) {
      const body = (await response.json()) as { user: unknown; error?: string }
      expect(body.error).toBeUndefined()
      accessTokens.add((await claimOf(setCookie(response, SESSION_COOKIE)!.value)).access_token)
    }
    expect(accessTokens.size, 'every response carries the same new access token').toBe(1)

    // A straggler with the old cookie, after the refresh finished, gets the same result, not a replay.
    const late = await readSession(cfg, cookie)
    expect(((await late.json()) as { error?: string }).error).toBeUndefined()
    expect(refreshGrants()).toBe(grants + 1)
    expect(op.rejectedRefreshes).toBe(rejected)
  })

  it('keeps the session but reports RefreshTokenError when the provider refuses the refresh token', async () => {
    const cfg = config()
    const token = (await decode({ token: await signedInCookie(cfg), secret: SECRET, salt: SESSION_COOKIE }))!
    const forged = await encode({
      token: { ...token, oauth: { ...(token.oauth as OAuthClaim), refresh_token: 'revoked-refresh-token' } },
      secret: SECRET,
      salt: SESSION_COOKIE,
    })
    const response = await readSession(cfg, forged)
    expect(await response.json()).toMatchObject({ user: { email: 'alice@example.com' }, error: 'RefreshTokenError' })
    const reissued = setCookie(response, SESSION_COOKIE)!.value
    expect((await claimOf(reissued)).refresh_token, 'the refused token is dropped').toBeUndefined()

    const grants = op.tokenRequests
    const again = await readSession(cfg, reissued)
    expect(await again.json()).toMatchObject({ error: 'RefreshTokenError' })
    expect(op.tokenRequests, 'no further attempts with nothing to refresh').toBe(grants)
    expect(cfg.logger.error).toHaveBeenCalled()
  })
})

describe('refresh-token rotation with database sessions', () => {
  it("refreshes the linked account's tokens once when 20 reads race, and stores them on the account", async () => {
    const { MemoryAdapter, createMemoryStore } = await import('../../adapters/memory.js')
    const store = createMemoryStore()
    const cfg = testConfig({
      adapter: MemoryAdapter(store),
      providers: [appProvider(op.issuer, 'client_secret_basic', 'op', { refreshTokens: true })] as never,
    })
    const client = new Client(cfg)
    await signInThroughProvider(client, 'op')
    const [account] = [...store.accounts.values()]
    const before = { access_token: account!.access_token, refresh_token: account!.refresh_token }
    expect(before.refresh_token).toEqual(expect.any(String))
    const grants = refreshGrants()
    const rejected = op.rejectedRefreshes

    const cookie = client.jar.get(SESSION_COOKIE)!
    const responses = await Promise.all(Array.from({ length: 20 }, () => readSession(cfg, cookie)))
    for (const response of responses) {
      const body = (await response.json()) as { user: { email: string }; error?: string }
      expect(body.user.email).toBe('alice@example.com')
      expect(body.error).toBeUndefined()
    }
    expect(refreshGrants(), 'one refresh at the provider').toBe(grants + 1)
    expect(op.rejectedRefreshes).toBe(rejected)
    const [after] = [...store.accounts.values()]
    expect(after!.access_token).not.toBe(before.access_token)
    expect(after!.refresh_token).not.toBe(before.refresh_token)
  })

  it('writes a refused refresh token as null, so an adapter that keeps the fields it is not given drops it', async () => {
    const { MemoryAdapter, createMemoryStore } = await import('../../adapters/memory.js')
    const store = createMemoryStore()
    const memory = MemoryAdapter(store)
    // As Prisma's update does (and a document store's, its update sent as JSON): a field that is
    // undefined is no field, and the stored value stays.
    const keepsMissingFields = {
      ...memory,
      updateAccount: (account: Parameters<NonNullable<typeof memory.updateAccount>>[0]) =>
        memory.updateAccount!(
          Object.fromEntries(Object.entries(account).filter(([, value]) => value !== undefined)) as typeof account,
        ),
    }
    const cfg = testConfig({
      adapter: keepsMissingFields,
      providers: [appProvider(op.issuer, 'client_secret_basic', 'op', { refreshTokens: true })] as never,
    })
    const client = new Client(cfg)
    await signInThroughProvider(client, 'op')
    const [account] = [...store.accounts.values()]
    account!.refresh_token = 'revoked-refresh-token'
    const cookie = client.jar.get(SESSION_COOKIE)!

    const response = await readSession(cfg, cookie)
    expect(await response.json()).toMatchObject({ user: { email: 'alice@example.com' }, error: 'RefreshTokenError' })
    const [after] = [...store.accounts.values()]
    expect(after!.refresh_token, 'the refused token is written as the empty column').toBeNull()

    const requests = op.tokenRequests
    const again = await readSession(cfg, cookie)
    expect(await again.json()).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(op.tokenRequests, 'the refused token is not replayed on the next read').toBe(requests)
  })
})
