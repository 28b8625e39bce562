/**
 * RP-initiated logout (opt-in) against the real OpenID Provider: signing out of the app also sends
 * the browser to the provider's end_session_endpoint, with a hint the provider accepts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Client, credentialsProvider, ORIGIN, testConfig } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from './helpers.js'

let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
})
afterAll(() => op?.close())

async function signedIn(logout: boolean, database = false): Promise<Client> {
  const config = testConfig({
    providers: [appProvider(op.issuer, 'client_secret_basic', 'op', { logout })] as never,
    ...(database ? { adapter: MemoryAdapter(createMemoryStore()) } : {}),
  })
  const client = new Client(config)
  await signInThroughProvider(client, 'op')
  expect((await client.session()).body).not.toBeNull()
  return client
}

describe('RP-initiated logout', () => {
  it.each([
    ['JWT', false],
    ['database', true],
  ])("sends the browser to the provider's end-session endpoint, which accepts the hint (%s sessions)", async (_name, database) => {
    const client = await signedIn(true, database)
    const response = await client.signOut({ callbackUrl: `${ORIGIN}/` })
    const location = new URL(response.headers.get('location')!)
    expect(`${location.origin}${location.pathname}`).toBe(`${op.issuer}/session/end`)
    expect(location.searchParams.get('post_logout_redirect_uri')).toBe(`${ORIGIN}/`)
    expect((await client.session()).body, 'our session is over').toBeNull()

    // The provider validates id_token_hint and the registered post_logout_redirect_uri.
    const atProvider = await fetch(location, { redirect: 'manual' })
    expect(atProvider.status).toBe(200)
    expect(await atProvider.text()).toContain('<form')
  })

  it('signs a database-session user without an account at the provider out quietly, to the callback URL', async () => {
    const config = testConfig({
      providers: [credentialsProvider(), appProvider(op.issuer, 'client_secret_basic', 'op', { logout: true })] as never,
      adapter: MemoryAdapter(createMemoryStore()),
      session: { strategy: 'database' },
    })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect((await client.session()).body).not.toBeNull()
    const response = await client.signOut({ callbackUrl: `${ORIGIN}/bye` })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/bye`)
    expect((await client.session()).body).toBeNull()
    expect(config.logger.error).not.toHaveBeenCalled()
  })

  it('is off unless the provider opts in: sign-out goes to the callback URL', async () => {
    const client = await signedIn(false)
    const response = await client.signOut({ callbackUrl: `${ORIGIN}/` })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/`)
    expect((await client.session()).body).toBeNull()
  })
})
