/**
 * Two users and two organisations, through `Auth`: Alice owns Acme and Bob is a member of it; Bob
 * owns Globex, where Alice is nobody. Each test builds its own world (a fresh memory store), signs
 * its users in with their own cookie jars, and may change memberships behind their backs.
 */
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { organizations } from '../../core/organizations.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, credentialsProvider, testConfig } from '../fixtures/http.js'

/** The users, as the credentials provider answers them. */
export const USERS = {
  alice: { id: 'u-alice', name: 'Alice', email: 'alice@example.test' },
  bob: { id: 'u-bob', name: 'Bob', email: 'bob@example.test' },
} as const

/** The custom role of the fixture: billing may read and pay invoices, and read the organisation. */
export const CUSTOM_ROLES = { billing: { invoice: ['read', 'pay'], organization: ['read'] } }

/** The two organisations. */
export const ACME = 'org-acme'
export const GLOBEX = 'org-globex'

/**
 * A world of two users and two organisations, under `strategy`; `overrides` may be a function of
 * the seeded adapter (to wrap it).
 */
export async function twoOrganizations(
  strategy: 'jwt' | 'database' = 'jwt',
  overrides: Partial<AuthConfig> | ((adapter: ReturnType<typeof MemoryAdapter>) => Partial<AuthConfig>) = {},
) {
  const adapter = MemoryAdapter(createMemoryStore())
  for (const user of Object.values(USERS)) await adapter.createUser({ ...user, emailVerified: null })
  const createdAt = new Date('2026-01-01T00:00:00Z')
  for (const [id, slug] of [
    [ACME, 'acme'],
    [GLOBEX, 'globex'],
  ] as const) {
    await adapter.createOrganization({ id, slug, name: slug, verifiedDomains: [], metadata: {}, createdAt })
  }
  const member = (organizationId: string, userId: string, role: string) =>
    adapter.createMembership({ organizationId, userId, role, status: 'active', createdAt })
  await member(ACME, USERS.alice.id, 'owner')
  await member(ACME, USERS.bob.id, 'member')
  await member(GLOBEX, USERS.bob.id, 'owner')
  const config = testConfig({
    adapter,
    session: { strategy },
    providers: [
      credentialsProvider((c) => (c.password === 'pw' && (c.username === 'alice' || c.username === 'bob') ? { ...USERS[c.username] } : null)),
    ],
    organizations: organizations({ roles: CUSTOM_ROLES }),
    ...(typeof overrides === 'function' ? overrides(adapter) : overrides),
  })
  const signedIn = async (username: 'alice' | 'bob') => {
    const client = new Client(config)
    if (strategy === 'database') {
      // Credentials sign in with JWTs only (as in Auth.js): a database session is a stored row.
      const sessionToken = `session-${username}-${crypto.randomUUID()}`
      await adapter.createSession({ sessionToken, userId: USERS[username].id, expires: new Date(Date.now() + 86_400_000) })
      client.jar.cookies.set('__Secure-authjs.session-token', sessionToken)
      return client
    }
    const response = await client.signIn({ username, password: 'pw' })
    if (response.status !== 302) throw new Error(`sign-in of ${username} answered ${response.status}`)
    return client
  }
  return { adapter, config, alice: await signedIn('alice'), bob: await signedIn('bob'), signedIn }
}

/** Posts `body` to `POST /organization/active` with the client's CSRF token (unless `csrf: false`). */
export async function setActive(client: Client, body: Record<string, unknown>, options: { csrf?: boolean; query?: Record<string, string> } = {}) {
  const csrfToken = options.csrf === false ? undefined : await client.csrfToken()
  const response = await client.send({
    method: 'POST',
    path: '/organization/active',
    json: { ...body, ...(csrfToken ? { csrfToken } : {}) },
    ...(options.query ? { query: options.query } : {}),
  })
  return { response, body: (await response.json()) as Record<string, unknown> | null }
}

/** The `activeOrganizationId` the session route answers the client with (`undefined` without one). */
export async function sessionOrganization(client: Client): Promise<unknown> {
  const { body } = await client.session()
  return (body as Record<string, unknown> | null)?.activeOrganizationId
}

/** A `Request` of the application carrying the client's cookies (what `can(request, …)` reads). */
export function appRequest(client: Client): Request {
  return new Request('https://authchart.test/app/invoices', { headers: { cookie: client.jar.header() } })
}
