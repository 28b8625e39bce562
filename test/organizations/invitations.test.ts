/**
 * Invitations through `Auth` over HTTP, from the attacker's side, two users and two organisations
 * in every test: Bob owns Globex and invites Alice's address to it; Alice owns Acme, where Bob is a
 * plain member. The link is accepted only by the signed-in user who proved the invited address,
 * once, before expiry and revocation; only members allowed to invite or revoke do; invitations
 * are counted per organisation and per inviter on the shared store; the token is never logged; a
 * failing or hanging adapter answers 503 with Retry-After and leaves nothing half-done.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { memoryAuthStore } from '../../core/store/index.js'
import { can } from '../../core/organizations.js'
import type { Adapter } from '../../core/adapters.js'
import { Client } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS, appRequest, sessionOrganization, setActive } from './fixture.js'
import { activate, answer, answerFromPage, invitationWorld, invite, linkOf, postJson, revoke } from './invitation-fixture.js'

afterEach(() => vi.useRealTimers())

/** An error as text, with every error it wraps (`cause`, Auth.js's `cause.err`). */
function errorText(error: unknown, depth = 0): string {
  if (!(error instanceof Error) || depth > 4) return typeof error === 'object' && error !== null ? JSON.stringify(error, (_k, v) => (v instanceof Error ? errorText(v, depth + 1) : v)) : String(error)
  const cause = (error as { cause?: unknown }).cause
  return `${error.name}: ${error.message} ${error.stack ?? ''} ${cause === undefined ? '' : errorText(cause, depth + 1)}`
}

/** A client of `config` with the cookies of `client` (the same browser, another configuration). */
function sameBrowser(client: Client, config: Client['config']): Client {
  const copy = new Client(config)
  for (const [name, value] of client.jar.cookies) copy.jar.cookies.set(name, value)
  return copy
}

/** Bob, active in Globex, has invited Alice's address to it as a member. */
async function invited(options: Parameters<typeof invitationWorld>[0] = {}) {
  const world = await invitationWorld(options)
  await activate(world.bob, GLOBEX)
  await activate(world.alice, ACME)
  const sent = await invite(world.bob, USERS.alice.email)
  expect(sent.status).toBe(201)
  const link = linkOf(world.mails.at(-1)!)
  const invitation = () => world.adapter.getInvitation(link.id)
  const membership = () => world.adapter.getMembership(GLOBEX, USERS.alice.id)
  return { ...world, sent, link, invitation, membership }
}

describe('sending an invitation', () => {
  it('stores it as sent and e-mails a link to the invited address only', async () => {
    const { sent, mails, link, invitation } = await invited()
    expect(sent.body).toEqual({
      invitation: { id: link.id, organizationId: GLOBEX, email: USERS.alice.email, role: 'member', status: 'sent', expires: expect.any(String) },
    })
    const expires = Date.parse((sent.body!.invitation as { expires: string }).expires)
    expect(Math.abs(expires - (Date.now() + 7 * 86_400_000))).toBeLessThan(5000)
    expect((await invitation())!.expires.getTime()).toBe(expires)
    expect(sent.headers.get('retry-after')).toBeNull()
    expect(mails).toHaveLength(1)
    expect(mails[0]).toMatchObject({ to: USERS.alice.email, organization: { id: GLOBEX, name: 'globex' }, role: 'member' })
    expect(link.url.pathname).toBe('/auth/organization/invitation')
    expect(await invitation()).toMatchObject({ status: 'sent', inviterId: USERS.bob.id, organizationId: GLOBEX })
  })

  it('refuses a plain member, a role above the inviter\'s own, a forged organisation id, signed out, and without CSRF', async () => {
    const world = await invitationWorld()
    await activate(world.bob, ACME)
    expect((await invite(world.bob, 'carol@example.test')).body).toEqual({ error: 'Forbidden' })
    await world.adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'admin' })
    expect((await invite(world.bob, 'carol@example.test', 'owner')).body).toEqual({ error: 'Forbidden' })
    expect((await invite(world.bob, 'carol@example.test', 'billing')).body).toEqual({ error: 'Forbidden' })
    // Bob owns Globex, but his requests act in Acme: naming Globex is refused.
    expect((await invite(world.bob, 'carol@example.test', 'member', { organizationId: GLOBEX })).body).toEqual({ error: 'NotActiveOrganization' })
    expect((await invite(world.bob, 'not an address')).status).toBe(400)
    expect((await invite(world.bob, 'carol@example.test', 'root')).status).toBe(400)
    expect((await postJson(new Client(world.config), 'invite', { email: 'carol@example.test', role: 'member' })).status).toBe(401)
    expect((await postJson(world.bob, 'invite', { email: 'carol@example.test', role: 'member' }, { csrf: false })).status).not.toBe(201)
    expect(world.mails).toEqual([])
    for (const address of ['carol@example', 'carol example@test.test', `${'c'.repeat(250)}@e.test`, 'x carol@example.test', 'carol@example.test x']) {
      expect((await invite(world.bob, address)).body).toEqual({ error: 'InvalidRequest' })
    }
    // An admin invites to a role no higher than their own, naming their active organisation or not.
    expect((await invite(world.bob, 'carol@example.test', 'admin')).status).toBe(201)
    const named = await invite(world.bob, ' Dave@Example.TEST ', 'member', { organizationId: ACME })
    expect(named).toMatchObject({ status: 201, body: { invitation: { organizationId: ACME, email: 'dave@example.test' } } })
  })
})

describe('accepting an invitation (attacks)', () => {
  it('lets the invited, verified address accept: an active member of Globex at once', async () => {
    const { config, alice, link, membership, invitation } = await invited()
    const accepted = await answer(alice, 'accept', link)
    expect(accepted).toMatchObject({
      status: 200,
      body: { invitation: { id: link.id, organizationId: GLOBEX, status: 'accepted' }, membership: { organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'active' } },
    })
    expect(await membership()).toMatchObject({ role: 'member', status: 'active' })
    expect((await invitation())!.status).toBe('accepted')
    await activate(alice, GLOBEX)
    expect(await sessionOrganization(alice)).toBe(GLOBEX)
    expect(await can(appRequest(alice), 'member:read', config)).toBe(true)
  })

  it('refuses a signed-in user of another address presenting the link (GHSA-fmh4-wcc4-5jm3)', async () => {
    const { bob, link, membership, invitation, adapter } = await invited()
    // Bob has the link (he sent it); he is not the invitee. Nor is a user with no proven address.
    expect(await answer(bob, 'accept', link)).toMatchObject({ status: 403, body: { error: 'WrongAddress' } })
    expect(await answer(bob, 'decline', link)).toMatchObject({ status: 403, body: { error: 'WrongAddress' } })
    expect((await invitation())!.status).toBe('sent')
    expect(await membership()).toBeNull()
    expect((await adapter.getMembership(GLOBEX, USERS.bob.id))!.role).toBe('owner')
  })

  it('refuses the invited address while it is not verified', async () => {
    const { alice, link, membership, invitation } = await invited({ verified: false })
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 403, body: { error: 'AddressNotVerified' } })
    expect((await invitation())!.status).toBe('sent')
    expect(await membership()).toBeNull()
  })

  it('refuses a forged token, another invitation\'s token and an unknown id alike', async () => {
    const { alice, bob, link, mails, membership } = await invited()
    await activate(bob, GLOBEX)
    await invite(bob, 'carol@example.test')
    const other = linkOf(mails.at(-1)!)
    for (const forged of [
      { id: link.id, token: '0'.repeat(64) },
      { id: link.id, token: other.token },
      { id: crypto.randomUUID(), token: link.token },
      { id: link.id, token: '' },
    ]) {
      expect(await answer(alice, 'accept', forged)).toMatchObject({ status: 404, body: { error: 'NotFound' } })
    }
    expect(await membership()).toBeNull()
  })

  it('accepts once: a second answer, a replayed request and the link after removal are refused', async () => {
    const { alice, bob, link, membership, invitation } = await invited()
    const csrfToken = await alice.csrfToken()
    const request = { method: 'POST', path: '/organization/invitation', json: { action: 'accept', id: link.id, token: link.token, csrfToken } }
    expect((await alice.send(request)).status).toBe(200)
    // The same request, cookies and all, again.
    const replayed = await alice.send(request)
    expect(replayed.status).toBe(409)
    expect(await replayed.json()).toEqual({ error: 'NotPending' })
    await activate(bob, GLOBEX)
    expect((await postJson(bob, 'remove', { userId: USERS.alice.id })).status).toBe(200)
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect(await answer(alice, 'decline', link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect((await alice.send(request)).status).toBe(409)
    expect((await membership())!.status).toBe('removed')
    expect((await invitation())!.status).toBe('accepted')
  })

  it('of two concurrent acceptances, one makes the member and the other is refused', async () => {
    const { alice, link, membership } = await invited()
    const answers = await Promise.all([answer(alice, 'accept', link), answer(alice, 'accept', link)])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    expect((await membership())!.status).toBe('active')
  })

  it('goes on when a concurrent answer created the membership between its read and its write', async () => {
    const { adapter, config, alice, link, membership } = await invited()
    // The other answer's first step: a membership that grants nothing, which this request's reads miss.
    await adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'invited', createdAt: new Date() })
    let stale = true
    const racing = new Proxy(adapter as Adapter, {
      get(target, key, receiver) {
        if (key === 'getMembership') return async (organizationId: string, userId: string) => (stale && userId === USERS.alice.id ? null : adapter.getMembership(organizationId, userId))
        if (key === 'createMembership') {
          return async (record: Parameters<Adapter['createMembership'] & object>[0]) => {
            stale = false
            return adapter.createMembership(record)
          }
        }
        return Reflect.get(target, key, receiver)
      },
    })
    const accepted = await answer(sameBrowser(alice, { ...config, adapter: racing }), 'accept', link)
    expect(accepted.status).toBe(200)
    expect((await membership())!.status).toBe('active')
  })

  it('compares the addresses in lower case: a user stored as Alice@Example.TEST is the invitee', async () => {
    const { adapter, alice, link, membership } = await invited()
    await adapter.updateUser({ id: USERS.alice.id, email: ' Alice@Example.TEST' })
    expect((await answer(alice, 'accept', link)).status).toBe(200)
    expect((await membership())!.status).toBe('active')
  })

  it('refuses a suspended member: an invitation does not lift a suspension', async () => {
    const { adapter, alice, link, membership, invitation } = await invited()
    await adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'suspended', createdAt: new Date() })
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect((await membership())!.status).toBe('suspended')
    expect((await invitation())!.status).toBe('sent')
  })

  it('refuses once the inviter is no longer an active member', async () => {
    const { adapter, alice, link, membership } = await invited()
    await adapter.createMembership({ organizationId: GLOBEX, userId: 'u-other-owner', role: 'owner', status: 'active', createdAt: new Date() })
    await adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.bob.id, status: 'removed' })
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect(await membership()).toBeNull()
  })

  it('answers a malformed answer 400: no id, an unknown action', async () => {
    const { alice, link, invitation } = await invited()
    expect(await postJson(alice, 'invitation', { action: 'accept', token: link.token })).toMatchObject({ status: 400, body: { error: 'InvalidRequest' } })
    expect(await postJson(alice, 'invitation', { action: 'promote', id: link.id, token: link.token })).toMatchObject({ status: 400 })
    expect(await postJson(alice, 'invitation', { id: link.id, token: link.token })).toMatchObject({ status: 400 })
    expect(await postJson(alice, 'invitation', { action: 'accept', id: ['x'], token: link.token })).toMatchObject({ status: 400 })
    expect((await invitation())!.status).toBe('sent')
  })

  it('refuses after expiry, settling the invitation as expired', async () => {
    const { alice, link, membership, invitation } = await invited({ invitations: { maxAge: 60 } })
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 })
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 410, body: { error: 'Expired' } })
    expect((await invitation())!.status).toBe('expired')
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect(await membership()).toBeNull()
  })

  it('refuses after revocation', async () => {
    const { alice, bob, link, membership, invitation } = await invited()
    const revoked = await revoke(bob, link.id)
    expect(revoked).toMatchObject({ status: 200 })
    expect(revoked.body).toEqual({ invitation: { id: link.id, organizationId: GLOBEX, status: 'revoked' } })
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect((await invitation())!.status).toBe('revoked')
    expect(await membership()).toBeNull()
  })

  it('refuses once the inviter lost the right to invite to that role', async () => {
    const { alice, bob, link, membership, adapter } = await invited()
    // Bob is demoted in Globex behind his invitation's back (a second owner did it).
    await adapter.createMembership({ organizationId: GLOBEX, userId: 'u-other-owner', role: 'owner', status: 'active', createdAt: new Date() })
    await adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.bob.id, role: 'member' })
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect(await membership()).toBeNull()
    void bob
  })

  it('lets the invitee decline: settled, no membership, and no accepting afterwards', async () => {
    const { alice, link, membership, invitation } = await invited()
    const declined = await answer(alice, 'decline', link)
    expect(declined).toMatchObject({ status: 200 })
    expect(declined.body).toEqual({ invitation: { id: link.id, organizationId: GLOBEX, status: 'declined' } })
    expect(declined.headers.get('retry-after')).toBeNull()
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 409 })
    expect((await invitation())!.status).toBe('declined')
    expect(await membership()).toBeNull()
  })

  it('answers a signed-out request 401 and changes nothing', async () => {
    const { config, link, invitation } = await invited()
    expect((await answer(new Client(config), 'accept', link)).status).toBe(401)
    expect((await invitation())!.status).toBe('sent')
  })
})

describe('the link is scanner-safe', () => {
  it('GET shows a page that changes nothing; its form post accepts', async () => {
    const { alice, link, invitation, membership } = await invited()
    for (let fetches = 0; fetches < 3; fetches++) {
      const page = await alice.send({ path: '/organization/invitation', query: { id: link.id, token: link.token } })
      expect(page.status).toBe(200)
      expect(page.headers.get('referrer-policy')).toBe('no-referrer')
      expect(page.headers.get('cache-control')).toContain('no-store')
      const html = await page.text()
      expect(html).toContain('name="action" value="accept"')
      expect(html).toContain(`value="${link.token}"`)
      expect(html).toContain('name="callbackUrl" value="https://authchart.test"')
    }
    const onward = await alice.send({ path: '/organization/invitation', query: { id: link.id, token: link.token, callbackUrl: 'https://authchart.test/welcome' } })
    expect(await onward.text()).toContain('name="callbackUrl" value="https://authchart.test/welcome"')
    expect((await invitation())!.status).toBe('sent')
    expect(await membership()).toBeNull()
    const posted = await answerFromPage(alice, 'accept', link)
    expect(posted.status).toBe(302)
    expect((await membership())!.status).toBe('active')
  })

  it('sends a signed-out browser to sign in and back to the link; a form post from another address goes to the error page', async () => {
    const { config, bob, link, membership } = await invited()
    const page = await new Client(config).send({ path: '/organization/invitation', query: { id: link.id, token: link.token } })
    expect(page.status).toBe(302)
    const location = new URL(page.headers.get('location')!)
    expect(location.pathname).toBe('/auth/signin')
    expect(new URL(location.searchParams.get('callbackUrl')!).searchParams.get('id')).toBe(link.id)
    const signedOut = await answerFromPage(new Client(config), 'accept', link)
    expect(signedOut.status).toBe(302)
    expect(new URL(signedOut.headers.get('location')!).pathname).toBe('/auth/signin')
    const wrong = await answerFromPage(bob, 'accept', link)
    expect(wrong.status).toBe(302)
    expect(wrong.headers.get('location')).toContain('error=AccessDenied')
    expect(await membership()).toBeNull()
  })
})

describe('revoking an invitation (attacks)', () => {
  it('refuses a member without invitation:revoke, and anyone of another organisation (IDOR by id)', async () => {
    const world = await invitationWorld()
    await activate(world.alice, ACME)
    await activate(world.bob, ACME)
    expect((await invite(world.alice, 'carol@example.test')).status).toBe(201)
    const link = linkOf(world.mails.at(-1)!)
    // Bob is a plain member of Acme; with no active organisation he acts in none.
    expect(await revoke(world.bob, link.id)).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect((await setActive(world.bob, { organizationId: null })).response.status).toBe(200)
    expect(await revoke(world.bob, link.id)).toMatchObject({ status: 403, body: { error: 'NoActiveOrganization' } })
    // Bob owns Globex: active there, Acme's invitation is one that does not exist.
    await activate(world.bob, GLOBEX)
    expect(await revoke(world.bob, link.id)).toMatchObject({ status: 404, body: { error: 'NotFound' } })
    expect(await revoke(world.bob, link.id, { organizationId: ACME })).toMatchObject({ status: 404 })
    expect((await world.adapter.getInvitation(link.id))!.status).toBe('sent')
    // The owner revokes; twice is nothing to revoke.
    expect((await revoke(world.alice, link.id)).status).toBe(200)
    expect(await revoke(world.alice, link.id)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
  })
})

describe('rate limits', () => {
  it('counts invitations per inviter and per organisation, across two instances sharing the store', async () => {
    const store = memoryAuthStore()
    const world = await invitationWorld({ invitations: { limit: { perInviter: 2, perOrganization: 4 } }, overrides: { store } })
    const other = await invitationWorld({ invitations: { limit: { perInviter: 2, perOrganization: 4 } }, overrides: { store, adapter: world.adapter } })
    await world.adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'admin' })
    const alice = world.alice
    const bobElsewhere = await other.signedIn('bob')
    await activate(alice, ACME)
    await activate(bobElsewhere, ACME)
    expect((await invite(alice, 'c1@example.test')).status).toBe(201)
    expect((await invite(alice, 'c2@example.test')).status).toBe(201)
    const limited = await invite(alice, 'c3@example.test')
    expect(limited).toMatchObject({ status: 429, body: { error: 'TooManyInvitations', retryAfter: expect.any(Number) } })
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    // Bob, on the other instance, has his own inviter budget but shares Acme's (every attempt counts).
    expect((await invite(bobElsewhere, 'c4@example.test')).status).toBe(201)
    expect((await invite(bobElsewhere, 'c5@example.test')).body).toMatchObject({ error: 'TooManyInvitations' })
    // Globex has budget left, but Bob's own is spent wherever he invites.
    await activate(bobElsewhere, GLOBEX)
    expect((await invite(bobElsewhere, 'c6@example.test')).status).toBe(429)
    // Alice's inviter budget is spent too, on either instance.
    const aliceElsewhere = await other.signedIn('alice')
    await activate(aliceElsewhere, ACME)
    expect((await invite(aliceElsewhere, 'c7@example.test')).status).toBe(429)
    expect(world.mails.length + other.mails.length).toBe(3)
  })
})

describe('the token is never logged', () => {
  it('not by a whole invitation: sent, its page opened, refused to another user, accepted', async () => {
    const { config, alice, bob, link } = await invited()
    expect((await alice.send({ path: '/organization/invitation', query: { id: link.id, token: link.token } })).status).toBe(200)
    expect((await answer(bob, 'accept', link)).status).toBe(403)
    expect((await answerFromPage(alice, 'accept', link)).status).toBe(302)
    const calls = [config.logger.error, config.logger.warn, config.logger.debug].flatMap((spy) => spy.mock.calls)
    expect(calls.length).toBeGreaterThan(0)
    expect(JSON.stringify(calls, (_key, value) => (value instanceof Error ? errorText(value) : value))).not.toContain(link.token)
  })

  it('not on success, not when the sender fails (the invitation is then revoked), not on a refusal', async () => {
    const failingSend = vi.fn(async (mail: { url: string }) => {
      throw new Error(`SMTP refused message with ${mail.url}`)
    })
    const world = await invitationWorld({ invitations: { send: failingSend } })
    await activate(world.bob, GLOBEX)
    const failed = await invite(world.bob, USERS.alice.email)
    expect(failed.status).toBe(503)
    expect(failed.headers.get('retry-after')).not.toBeNull()
    const url = new URL(failingSend.mock.calls[0]![0].url)
    const token = url.searchParams.get('token')!
    const id = url.searchParams.get('id')!
    expect((await world.adapter.getInvitation(id))!.status).toBe('revoked')
    expect(await answer(world.alice, 'accept', { id, token })).toMatchObject({ status: 409 })
    expect(await answer(world.bob, 'accept', { id, token })).toMatchObject({ status: 403 })
    expect((await world.alice.send({ path: '/organization/invitation', query: { id, token } })).status).toBe(200)
    expect((await answerFromPage(world.bob, 'decline', { id, token })).status).toBe(302)
    const logged = JSON.stringify(
      [world.config.logger.error, world.config.logger.warn, world.config.logger.debug].flatMap((spy) => spy.mock.calls),
      (_key, value) => (value instanceof Error ? errorText(value) : value),
    )
    expect(logged).toContain('EmailSignInError')
    expect(logged).toContain('SMTP refused')
    expect(logged).not.toContain(token)
  })
})

describe('an adapter that fails or hangs', () => {
  const failing = (adapter: Adapter, method: keyof Adapter, mode: 'throws' | 'hangs') =>
    new Proxy(adapter, {
      get(target, key, receiver) {
        if (key !== method) return Reflect.get(target, key, receiver)
        return mode === 'throws' ? async () => Promise.reject(Object.assign(new Error('connection lost'), { code: 'ECONNRESET' })) : () => new Promise(() => {})
      },
    })

  for (const [method, mode] of [
    ['settleInvitation', 'throws'],
    ['settleInvitation', 'hangs'],
    ['createMembership', 'throws'],
    ['getInvitation', 'hangs'],
    ['updateMembership', 'throws'],
  ] as const) {
    it(`answers 503 with Retry-After when ${method} ${mode}, grants nothing, and the retry completes`, async () => {
      const world = await invited()
      const broken = { ...world.config, adapter: failing(world.adapter as Adapter, method, mode), availability: { adapterTimeout: 50 } }
      const aliceOnBroken = sameBrowser(world.alice, broken)
      const refused = await answer(aliceOnBroken, 'accept', world.link)
      expect(refused.status).toBe(503)
      expect(refused.headers.get('retry-after')).not.toBeNull()
      expect((await world.membership())?.status ?? null).not.toBe('active')
      expect((await setActive(world.alice, { organizationId: GLOBEX })).response.status).toBe(403)
      const retried = await answer(world.alice, 'accept', world.link)
      expect(retried.status).toBe(200)
      expect((await world.membership())!.status).toBe('active')
    })
  }

  it('answers 503 when the store counting invitations fails, and sends nothing', async () => {
    const world = await invitationWorld()
    const store = memoryAuthStore()
    const down = { ...store, consume: async () => Promise.reject(Object.assign(new Error('Connection is closed.'), { code: 'ECONNRESET' })) }
    const broken = { ...world.config, store: down }
    await setActive(world.bob, { organizationId: GLOBEX })
    const bob = sameBrowser(world.bob, broken)
    const answered = await invite(bob, USERS.alice.email)
    expect(answered.status).toBe(503)
    expect(world.mails).toEqual([])
  })
})
