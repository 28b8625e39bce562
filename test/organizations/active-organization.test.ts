/**
 * Attacks on the active organisation, through `Auth` over HTTP: two users (Alice owns Acme, Bob is
 * a member of Acme and owns Globex) and two organisations in every test. The active organisation
 * is only ever a choice: the session read and `can()` re-check the membership on every request.
 */
import { describe, expect, it } from 'vitest'
import { can } from '../../core/organizations.js'
import { Client } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS, appRequest, sessionOrganization, setActive, twoOrganizations } from './fixture.js'

const ORGANIZATION_COOKIE = '__Secure-authjs.active-organization'

describe('POST /organization/active', () => {
  it('refuses an organisation the user is not a member of, and changes nothing', async () => {
    const { config, alice } = await twoOrganizations()
    expect((await setActive(alice, { organizationId: ACME })).response.status).toBe(200)
    const refused = await setActive(alice, { organizationId: GLOBEX })
    expect(refused.response.status).toBe(403)
    expect(refused.body).toEqual({ error: 'NotAMember' })
    expect(refused.response.headers.getSetCookie().some((c) => c.startsWith(ORGANIZATION_COOKIE))).toBe(false)
    expect(await sessionOrganization(alice)).toBe(ACME)
    expect(await can(appRequest(alice), 'organization:read', config)).toBe(true)
  })

  it('answers an unknown organisation exactly as one the user is not a member of (no probing)', async () => {
    const { alice } = await twoOrganizations()
    const unknown = await setActive(alice, { organizationId: 'org-nobody' })
    const foreign = await setActive(alice, { organizationId: GLOBEX })
    expect([unknown.response.status, unknown.body]).toEqual([foreign.response.status, foreign.body])
  })

  it('refuses a suspended, removed or invited membership', async () => {
    const { adapter, bob } = await twoOrganizations()
    for (const status of ['suspended', 'removed', 'invited'] as const) {
      await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status })
      expect((await setActive(bob, { organizationId: ACME })).response.status).toBe(403)
    }
    expect(await sessionOrganization(bob)).toBeUndefined()
  })

  it('reads the organisation from the body only: a forged id in the query is never read', async () => {
    const { alice } = await twoOrganizations()
    const both = await setActive(alice, { organizationId: ACME }, { query: { organizationId: GLOBEX } })
    expect(both.response.status).toBe(200)
    expect(both.body).toEqual({ activeOrganizationId: ACME, role: 'owner' })
    expect(await sessionOrganization(alice)).toBe(ACME)
    const queryOnly = await setActive(alice, {}, { query: { organizationId: GLOBEX } })
    expect(queryOnly.response.status).toBe(400)
    expect(await sessionOrganization(alice)).toBe(ACME)
  })

  it('refuses a forged id of another shape in the body', async () => {
    const { alice } = await twoOrganizations()
    for (const organizationId of [[GLOBEX], { id: GLOBEX }, 42, '', 'x'.repeat(300)]) {
      expect((await setActive(alice, { organizationId })).response.status).toBe(400)
    }
    expect(await sessionOrganization(alice)).toBeUndefined()
  })

  it('is CSRF-checked and acts for the signed-in user only', async () => {
    const { config, bob } = await twoOrganizations()
    const forged = await setActive(bob, { organizationId: GLOBEX }, { csrf: false })
    expect(forged.response.status).not.toBe(200)
    expect(await sessionOrganization(bob)).toBeUndefined()
    const stranger = new Client(config)
    expect((await setActive(stranger, { organizationId: ACME })).response.status).toBe(401)
  })

  it('clears the choice with null', async () => {
    const { bob } = await twoOrganizations()
    await setActive(bob, { organizationId: GLOBEX })
    expect(await sessionOrganization(bob)).toBe(GLOBEX)
    expect((await setActive(bob, { organizationId: null })).body).toEqual({ activeOrganizationId: null, role: null })
    expect(await sessionOrganization(bob)).toBeUndefined()
  })
})

describe('the organisation cookie', () => {
  it("is bound to its user: Bob's choice copied into Alice's browser gives her nothing", async () => {
    const { config, alice, bob } = await twoOrganizations()
    await setActive(bob, { organizationId: GLOBEX })
    alice.jar.cookies.set(ORGANIZATION_COOKIE, bob.jar.get(ORGANIZATION_COOKIE)!)
    expect(await sessionOrganization(alice)).toBeUndefined()
    expect(await can(appRequest(alice), 'organization:read', config)).toBe(false)
  })

  it('names nothing once tampered with: another organisation under the same MAC', async () => {
    const { config, bob } = await twoOrganizations()
    await setActive(bob, { organizationId: ACME })
    const [, mac] = bob.jar.get(ORGANIZATION_COOKIE)!.split('.')
    // Bob is a member of Globex too: only the MAC stops the swap, the membership would not.
    bob.jar.cookies.set(ORGANIZATION_COOKIE, `${GLOBEX}.${mac}`)
    expect(await sessionOrganization(bob)).toBeUndefined()
    expect(await can(appRequest(bob), 'organization:delete', config)).toBe(false)
  })

  it('does not follow the browser to the next user who signs in there', async () => {
    const { bob, signedIn } = await twoOrganizations()
    await setActive(bob, { organizationId: GLOBEX })
    const alice = await signedIn('alice')
    alice.jar.cookies.set(ORGANIZATION_COOKIE, bob.jar.get(ORGANIZATION_COOKIE)!)
    expect(await sessionOrganization(alice)).toBeUndefined()
  })
})

describe("a removed member's next request", () => {
  for (const strategy of ['jwt', 'database'] as const) {
    it(`has no organisation and no permission (${strategy})`, async () => {
      const { adapter, config, alice, bob } = await twoOrganizations(strategy)
      await setActive(bob, { organizationId: ACME })
      await setActive(alice, { organizationId: ACME })
      expect(await sessionOrganization(bob)).toBe(ACME)
      await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'removed' })
      expect(await sessionOrganization(bob)).toBeUndefined()
      expect(await can(appRequest(bob), 'organization:read', config)).toBe(false)
      const read = await bob.send({ path: '/organization/active' })
      expect(await read.json()).toEqual({ activeOrganizationId: null, role: null })
      // Alice, still a member, keeps hers.
      expect(await sessionOrganization(alice)).toBe(ACME)
    })
  }
})

describe('a JWT whose organisation claim outlived the membership', () => {
  // An application that keeps the active organisation in its token, as the peers do: the jwt
  // callback stores what update() sends, and the session callback copies it out.
  const keepsClaim = {
    callbacks: {
      jwt: ({ token, trigger, session }: { token: Record<string, unknown>; trigger?: string; session?: unknown }) =>
        trigger === 'update' ? { ...token, activeOrganizationId: (session as { activeOrganizationId?: string }).activeOrganizationId } : token,
      session: ({ session, token }: { session: Record<string, unknown>; token: Record<string, unknown> }) => ({
        ...session,
        activeOrganizationId: token.activeOrganizationId,
      }),
    },
  }

  const updateToken = async (client: Client, activeOrganizationId: string) => {
    const csrfToken = await client.csrfToken()
    const response = await client.send({ method: 'POST', path: '/session', json: { csrfToken, data: { activeOrganizationId } } })
    expect(response.status).toBe(200)
  }

  it('loses the organisation at once when the member is removed', async () => {
    const { adapter, bob } = await twoOrganizations('jwt', keepsClaim as never)
    await updateToken(bob, ACME)
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, status: 'removed' })
    expect(await sessionOrganization(bob)).toBeUndefined()
  })

  it("never names an organisation the user did not choose through the route, even one they belong to", async () => {
    const { alice, bob } = await twoOrganizations('jwt', keepsClaim as never)
    await updateToken(alice, GLOBEX)
    expect(await sessionOrganization(alice)).toBeUndefined()
    await updateToken(bob, GLOBEX)
    expect(await sessionOrganization(bob)).toBeUndefined()
    await setActive(bob, { organizationId: ACME })
    expect(await sessionOrganization(bob)).toBe(ACME)
  })
})

describe('an ended session', () => {
  it('acts for no one on the organisation routes and in can(): an expired or deleted row (database)', async () => {
    const { adapter, config, bob } = await twoOrganizations('database')
    await setActive(bob, { organizationId: GLOBEX })
    expect(await can(appRequest(bob), 'member:remove', config)).toBe(true)
    const sessionToken = bob.jar.get('__Secure-authjs.session-token')!
    await adapter.updateSession({ sessionToken, expires: new Date(Date.now() - 1000) })
    const ended = async () => {
      expect((await setActive(bob, { organizationId: GLOBEX })).response.status).toBe(401)
      expect((await bob.send({ path: '/organization/active' })).status).toBe(401)
      const csrfToken = await bob.csrfToken()
      const removal = await bob.send({ method: 'POST', path: '/organization/remove', json: { userId: USERS.alice.id, csrfToken } })
      expect(removal.status).toBe(401)
      expect(await can(appRequest(bob), 'member:remove', config)).toBe(false)
    }
    await ended()
    await adapter.deleteSession(sessionToken)
    bob.jar.cookies.set('__Secure-authjs.session-token', sessionToken)
    await ended()
  })
})
