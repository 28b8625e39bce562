/**
 * Invitations over the PostgreSQL adapter (on PGlite), through `Auth` on two instances sharing the
 * database and the store, two users and two organisations: the settlement is the database's atomic
 * update, so of two acceptances racing on two instances one makes the member; the wrong address
 * is refused; a revocation on one instance holds on the other.
 */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { organizations, type InvitationMail } from '../../core/organizations.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { Client, credentialsProvider, testConfig } from '../fixtures/http.js'
import { CUSTOM_ROLES, USERS } from './fixture.js'
import { activate, answer, invite, linkOf, revoke } from './invitation-fixture.js'

const ACME = 'pg-org-acme'
const GLOBEX = 'pg-org-globex'
const db = new PGlite()
const adapter = PostgresAdapter(db, { tablePrefix: 'invites' })
const store = memoryAuthStore()
const mails: InvitationMail[] = []

/** One instance of the application: its own configuration over the shared database and store. */
const instance = () =>
  testConfig({
    adapter,
    store,
    session: { strategy: 'jwt' },
    providers: [credentialsProvider((c) => (c.password === 'pw' && (c.username === 'alice' || c.username === 'bob') ? { ...USERS[c.username] } : null))],
    organizations: organizations({ roles: CUSTOM_ROLES, invitations: { send: (mail) => void mails.push(mail) } }),
  })
const [first, second] = [instance(), instance()]

async function signedIn(config: ReturnType<typeof instance>, username: 'alice' | 'bob') {
  const client = new Client(config)
  expect((await client.signIn({ username, password: 'pw' })).status).toBe(302)
  return client
}

beforeAll(async () => {
  await adapter.migrate()
  for (const user of Object.values(USERS)) await adapter.createUser({ ...user, emailVerified: new Date('2026-01-02T00:00:00Z') })
  const createdAt = new Date('2026-01-01T00:00:00Z')
  for (const [id, slug] of [
    [ACME, 'pg-acme'],
    [GLOBEX, 'pg-globex'],
  ] as const) {
    await adapter.createOrganization({ id, slug, name: slug, verifiedDomains: [], metadata: {}, createdAt })
  }
  await adapter.createMembership({ organizationId: ACME, userId: USERS.alice.id, role: 'owner', status: 'active', createdAt })
  await adapter.createMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'member', status: 'active', createdAt })
  await adapter.createMembership({ organizationId: GLOBEX, userId: USERS.bob.id, role: 'owner', status: 'active', createdAt })
})
afterAll(async () => {
  await db.close()
})

describe('invitations over PostgreSQL, on two instances', () => {
  it('refuses the wrong address, and of two acceptances on two instances one makes the member', async () => {
    const bob = await signedIn(first, 'bob')
    await activate(bob, GLOBEX)
    expect((await invite(bob, USERS.alice.email)).status).toBe(201)
    const link = linkOf(mails.at(-1)!)
    expect(await answer(bob, 'accept', link)).toMatchObject({ status: 403, body: { error: 'WrongAddress' } })
    const [aliceHere, aliceThere] = [await signedIn(first, 'alice'), await signedIn(second, 'alice')]
    const answers = await Promise.all([answer(aliceHere, 'accept', link), answer(aliceThere, 'accept', link)])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    expect(await adapter.getMembership(GLOBEX, USERS.alice.id)).toMatchObject({ role: 'member', status: 'active' })
    expect((await adapter.getInvitation(link.id))!.status).toBe('accepted')
  })

  it('holds a revocation made on one instance on the other, and keeps Acme\'s invitations out of Globex\'s reach', async () => {
    const alice = await signedIn(first, 'alice')
    await activate(alice, ACME)
    expect((await invite(alice, 'carol@example.test')).status).toBe(201)
    const link = linkOf(mails.at(-1)!)
    const bobThere = await signedIn(second, 'bob')
    await activate(bobThere, GLOBEX)
    expect(await revoke(bobThere, link.id)).toMatchObject({ status: 404 })
    expect((await revoke(alice, link.id)).status).toBe(200)
    expect(await revoke(alice, link.id)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect((await adapter.getInvitation(link.id))!.status).toBe('revoked')
  })
})
