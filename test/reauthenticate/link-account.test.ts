/**
 * Linking a provider account while signed in is a sensitive action, against the local OpenID
 * provider: a stale session is asked before it is sent to the provider and links the account once
 * it proved a factor (the sign-in resumed once); a stale session that reaches the callback around
 * the gate links nothing.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { AuthConfig } from '../../core/types.js'
import { ALICE, Client, ORIGIN, featureConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CALLBACK_BASE, deliverCallback, opClient, signInThroughProvider, startSignIn } from '../oauth/helpers.js'
import { stepUp } from '../../core/step-up.js'

const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`
const SESSION_COOKIE = '__Secure-authjs.session-token'
const HTML = { accept: 'text/html' }
const later = (minutes: number) => vi.setSystemTime(Date.now() + minutes * 60_000)
const secondsLater = (seconds: number) => vi.setSystemTime(Date.now() + seconds * 1000)

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
})
afterAll(() => op?.close())
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

function signedInClient(store: MemoryStore, strategy: 'jwt' | 'database', overrides: Partial<AuthConfig> = {}) {
  // A JWT session's user is linked to only when it is stored (Auth.js's credentials users are not).
  if (strategy === 'jwt') store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
  return new Client(
    featureConfig({
      adapter: MemoryAdapter(store),
      session: { strategy },
      ...overrides,
      providers: [...featureConfig().providers, appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state', 'nonce'] })] as never,
    }),
  )
}

const linkedUserId = async (store: MemoryStore) =>
  (await MemoryAdapter(store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub }))?.id

async function askToLink(client: Client): Promise<Response> {
  return client.send({ path: '/signin/op', body: { csrfToken: await client.csrfToken(), callbackUrl: `${ORIGIN}/settings` }, headers: HTML })
}

for (const strategy of ['jwt', 'database'] as const) {
  describe(`linking an account while signed in (${strategy} sessions)`, () => {
    it('asks a stale session before the provider, then resumes the sign-in once and links the account', async () => {
      const store = createMemoryStore()
      const client = signedInClient(store, strategy)
      await client.signIn({ username: 'alice', password: 'wonderland' })
      const [alice] = [...store.users.values()]
      later(11)
      const asked = await askToLink(client)
      expect(asked.status).toBe(303)
      expect(asked.headers.get('location')).toBe(STEP_PAGE)
      expect(await (await client.send({ path: '/step/reauthenticate', headers: HTML })).text()).toContain("Confirm it's you to link another account")
      const csrfToken = await client.csrfToken()
      const resumed = await client.send({
        path: '/step/reauthenticate',
        body: { event: 'reauth.password', username: 'alice', password: 'wonderland', csrfToken },
        headers: HTML,
      })
      const page = await resumed.text()
      expect(page).toContain('action="/auth/signin/op"')
      expect(page).toContain(`name="callbackUrl" value="${ORIGIN}/settings"`)
      expect(await linkedUserId(store)).toBeUndefined()
      // The resumed sign-in: fresh now, it goes to the provider and links the account to Alice.
      const { callback } = await signInThroughProvider(client, 'op', { callbackUrl: `${ORIGIN}/settings` })
      expect(callback.headers.get('location')).toBe(`${ORIGIN}/settings`)
      expect(await linkedUserId(store)).toBe(alice!.id)
      expect(store.users.size).toBe(1)
    })

    it('links nothing when a stale session reaches the callback around the gate', async () => {
      const store = createMemoryStore()
      // Half a minute of freshness for linking: the provider's code outlives it.
      const client = signedInClient(store, strategy, { stepUp: stepUp({ actions: { 'link-account': { maxAge: 30 } } }) })
      await client.signIn({ username: 'alice', password: 'wonderland' })
      const session = client.jar.get(SESSION_COOKIE)
      // Fresh when the sign-in started; stale by the time the provider's answer arrives.
      const authorizationUrl = await startSignIn(client, 'op')
      const answer = await visitProvider(authorizationUrl, CALLBACK_BASE)
      secondsLater(40)
      const callback = await deliverCallback(client, answer)
      expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=OAuthAccountNotLinked`)
      expect(client.config.logger!.error).toHaveBeenCalledWith(
        expect.objectContaining({ type: 'OAuthAccountNotLinked', message: 'The session is too old to link another account: re-authenticate first' }),
      )
      expect(await linkedUserId(store)).toBeUndefined()
      // Still signed in as before, with the same session.
      expect(client.jar.get(SESSION_COOKIE)).toBe(session)
    })
  })
}
