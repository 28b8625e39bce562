/**
 * Account linking of OAuth sign-ins (reference §5.1), done by the sign-in completion for the OAuth
 * first factor, against the real test provider: who a provider account may be linked to, and what
 * is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from './helpers.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const EMAIL = OP_ACCOUNT.email.toLowerCase()
const EXISTING = { id: 'u-existing', name: 'Existing', email: EMAIL, emailVerified: null }

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
})
afterAll(() => op?.close())

function setup(store: MemoryStore, providerOptions: Record<string, unknown> = {}) {
  return new Client(
    testConfig({
      adapter: MemoryAdapter(store),
      providers: [
        ...testConfig().providers,
        appProvider(op.issuer, 'client_secret_basic', 'op', { checks: ['pkce', 'state'], ...providerOptions }),
      ] as never,
    }),
  )
}

const linkedUserId = async (store: MemoryStore) =>
  (await MemoryAdapter(store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub }))?.id

describe('OAuth account linking', () => {
  it('refuses an account whose e-mail address belongs to another user, without allowDangerousEmailAccountLinking', async () => {
    const store = createMemoryStore()
    store.users.set(EXISTING.id, { ...EXISTING })
    const client = setup(store)
    const { callback } = await signInThroughProvider(client, 'op')
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=OAuthAccountNotLinked`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(store.accounts.size).toBe(0)
    expect(store.sessions.size).toBe(0)
    expect(client.config.logger!.error).toHaveBeenCalledWith(
      expect.objectContaining({ type: 'OAuthAccountNotLinked', message: 'Another account already exists with the same e-mail address' }),
    )
  })

  it('links it to that user with allowDangerousEmailAccountLinking, creating no one', async () => {
    const store = createMemoryStore()
    store.users.set(EXISTING.id, { ...EXISTING })
    const client = setup(store, { allowDangerousEmailAccountLinking: true })
    await signInThroughProvider(client, 'op')
    expect(await linkedUserId(store)).toBe(EXISTING.id)
    expect(store.users.size).toBe(1)
    expect(store.sessions.get(client.jar.get(SESSION_COOKIE)!)?.userId).toBe(EXISTING.id)
  })

  it('links a new provider account to the user who is signed in', async () => {
    const store = createMemoryStore()
    const client = setup(store)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const [credentialsUser] = [...store.users.values()]
    await signInThroughProvider(client, 'op')
    expect(await linkedUserId(store)).toBe(credentialsUser!.id)
    expect(store.users.size).toBe(1)
  })

  it('refuses an account already linked to someone else while another user is signed in', async () => {
    const store = createMemoryStore()
    store.users.set(EXISTING.id, { ...EXISTING, email: 'owner@example.com' })
    await MemoryAdapter(store).linkAccount({
      userId: EXISTING.id,
      provider: 'op',
      providerAccountId: OP_ACCOUNT.sub,
      type: 'oidc',
    })
    const client = setup(store)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const signedIn = client.jar.get(SESSION_COOKIE)
    const { callback } = await signInThroughProvider(client, 'op')
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=OAuthAccountNotLinked`)
    // The user stays who they were: no session for the account's owner.
    expect(client.jar.get(SESSION_COOKIE)).toBe(signedIn)
    expect(store.sessions.get(signedIn!)?.userId).not.toBe(EXISTING.id)
  })
})
