/**
 * README `organizations.ts`: a member whose role allows `invoice:pay` in their active organisation
 * gets through `payInvoice`; another member, someone of another organisation, and the same member
 * once removed get 403.
 */
import { describe, expect, it } from 'vitest'
import type { Adapter } from '../../core/adapters.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, SECRET } from '../fixtures/http.js'
import { loadSnippet } from './snippet.js'

const { adapter, config, payInvoice } = await loadSnippet<{
  adapter: Required<Adapter>
  config: AuthConfig
  payInvoice: (request: Request) => Promise<Response>
}>('organizations.ts', { AUTH_SECRET: SECRET, DEMO_PASSWORD: 'demo-password' })

const createdAt = new Date('2026-01-01T00:00:00Z')
for (const name of ['alice', 'bob']) await adapter.createUser({ id: name, name, email: `${name}@example.com`, emailVerified: null })
for (const id of ['acme', 'globex']) await adapter.createOrganization({ id, slug: id, name: id, verifiedDomains: [], metadata: {}, createdAt })
await adapter.createMembership({ organizationId: 'acme', userId: 'alice', role: 'billing', status: 'active', createdAt })
await adapter.createMembership({ organizationId: 'acme', userId: 'bob', role: 'member', status: 'active', createdAt })
await adapter.createMembership({ organizationId: 'globex', userId: 'bob', role: 'owner', status: 'active', createdAt })

async function signedInWithActive(username: string, organizationId: string) {
  const client = new Client(config)
  expect((await client.signIn({ username, password: 'demo-password' })).status).toBe(302)
  const csrfToken = await client.csrfToken()
  const chosen = await client.send({ method: 'POST', path: '/organization/active', json: { organizationId, csrfToken } })
  expect(chosen.status).toBe(200)
  return client
}

const pay = (client: Client) => payInvoice(new Request('https://authchart.test/invoices/1/pay', { headers: { cookie: client.jar.header() } }))

describe('README organizations.ts', () => {
  it('lets the billing member of the active organisation pay, and nobody else', async () => {
    const alice = await signedInWithActive('alice', 'acme')
    expect((await pay(alice)).status).toBe(200)
    expect((await pay(await signedInWithActive('bob', 'acme'))).status).toBe(403)
    // Bob owns Globex, but owning gives no permission of the custom role's resources.
    expect((await pay(await signedInWithActive('bob', 'globex'))).status).toBe(403)
    expect((await pay(new Client(config))).status).toBe(403)
  })

  it('refuses the member once removed, at once', async () => {
    const alice = await signedInWithActive('alice', 'acme')
    expect((await pay(alice)).status).toBe(200)
    await adapter.updateMembership({ organizationId: 'acme', userId: 'alice', status: 'removed' })
    expect((await pay(alice)).status).toBe(403)
    await adapter.updateMembership({ organizationId: 'acme', userId: 'alice', status: 'active' })
  })

  it('refuses a wrong password', async () => {
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'guess' })
    expect((await client.session()).body).toBeNull()
  })
})
