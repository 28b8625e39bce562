/**
 * Invitations, the rules the attack tests reach only once: the link token's derivation, the
 * message, the error page each refusal of the link's page lands on, the checks repeated behind
 * the one-time settlement (each met by a change that happens between the check and the
 * settlement), the interrupted acceptance's marker per invitation, and the request's shape.
 * Bob owns Globex and invites Alice's address; Alice owns Acme, where Bob is a plain member.
 */
import { createHmac, hkdfSync } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Adapter } from '../../core/adapters.js'
import { assertConfig } from '../../core/index.js'
import { advance } from '../../core/engine/advance.js'
import type { RequestContext } from '../../core/config/types.js'
import { activeOrganizationCookieName, signActiveOrganization } from '../../core/organizations/active.js'
import { invitationToken, organizationInvitationFlow } from '../../core/organizations/invitations.js'
import { Client, ORIGIN, SECRET } from '../fixtures/http.js'
import { organizations } from '../../core/organizations.js'
import { ACME, CUSTOM_ROLES, GLOBEX, USERS, twoOrganizations } from '../organizations/fixture.js'
import { activate, answer, answerFromPage, invitationWorld, invite, linkOf, postJson } from '../organizations/invitation-fixture.js'

afterEach(() => vi.useRealTimers())

type World = Awaited<ReturnType<typeof invitationWorld>>

/** Bob, active in Globex, has invited Alice's address to it as `role`. */
async function invited(options: Parameters<typeof invitationWorld>[0] = {}, role = 'member') {
  const world = await invitationWorld(options)
  await activate(world.bob, GLOBEX)
  const sent = await invite(world.bob, USERS.alice.email, role)
  expect(sent.status).toBe(201)
  const link = linkOf(world.mails.at(-1)!)
  return { ...world, sent, link, membership: () => world.adapter.getMembership(GLOBEX, USERS.alice.id), invitation: () => world.adapter.getInvitation(link.id) }
}

/** A client of `config` with the cookies of `client` (the same browser, another configuration). */
function sameBrowser(client: Client, config: Client['config']): Client {
  const copy = new Client(config)
  for (const [name, value] of client.jar.cookies) copy.jar.cookies.set(name, value)
  return copy
}

/** `adapter` with `method` replaced by `replacement(original)`. */
function replacing<K extends keyof Adapter>(adapter: Adapter, method: K, replacement: (original: NonNullable<Adapter[K]>) => unknown): Adapter {
  return new Proxy(adapter, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      return key === method ? replacement((value as (...args: never[]) => unknown).bind(target) as NonNullable<Adapter[K]>) : value
    },
  })
}

/** Alice answers on a configuration whose adapter is `adapter`. */
const answerThrough = (world: World, adapter: Adapter, action: 'accept' | 'decline', link: { id: string; token: string }) =>
  answer(sameBrowser(world.alice, { ...world.config, adapter }), action, link)

/** The messages of every error logged so far, with the errors they wrap. */
function loggedMessages(world: World): string[] {
  const messages: string[] = []
  const visit = (value: unknown, depth = 0): void => {
    if (depth > 5) return
    if (value instanceof Error) {
      messages.push(value.message)
      visit((value as { cause?: unknown }).cause, depth + 1)
    } else if (Array.isArray(value)) value.forEach((item) => visit(item, depth + 1))
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach((item) => visit(item, depth + 1))
  }
  visit([world.config.logger.error, world.config.logger.warn].flatMap((spy) => spy.mock.calls))
  return messages
}

/** The error page a page answer was sent to. */
const errorOf = (response: Response) => new URL(response.headers.get('location')!).searchParams.get('error')

describe('the link token and the message', () => {
  it('derives the token as HMAC-SHA-256 of the id under the HKDF key of the secret', async () => {
    const key = Buffer.from(hkdfSync('sha256', SECRET, 'authchart.organization-invitation', 'authchart organisation invitation link', 32))
    expect(await invitationToken(SECRET, 'inv-1')).toBe(createHmac('sha256', key).update('inv-1').digest('hex'))
  })

  it('tells the invitee the organisation, the site, the role and the link, and stamps the invitation now', async () => {
    const { mails, link, invitation } = await invited({}, 'admin')
    const mail = mails[0]!
    expect(mail.subject).toBe('You are invited to join globex')
    expect(mail.text).toContain('You are invited to join globex on authchart.test as admin.')
    expect(mail.text).toContain(`\n${link.url.href}\n`)
    expect(Math.abs((await invitation())!.createdAt.getTime() - Date.now())).toBeLessThan(5000)
  })

  it('accepts an address of 254 characters, not one of 255', async () => {
    const world = await invitationWorld()
    await activate(world.bob, GLOBEX)
    const local = (length: number) => `${'c'.repeat(length - '@example.test'.length)}@example.test`
    expect((await invite(world.bob, local(254))).status).toBe(201)
    expect((await invite(world.bob, local(255))).body).toEqual({ error: 'InvalidRequest' })
  })

  it('scrubs the link and any bare token from a sender\'s error', async () => {
    const send = async (mail: { url: string }) => {
      throw new Error(`refused ${mail.url}; token ${new URL(mail.url).searchParams.get('token')}`)
    }
    const world = await invitationWorld({ invitations: { send } })
    await activate(world.bob, GLOBEX)
    expect((await invite(world.bob, USERS.alice.email)).status).toBe(503)
    expect(loggedMessages(world)).toContain('refused [redacted]; token [redacted]')
  })

  it('without a sender of its own nor an e-mail provider, sends nothing, says why, and leaves nothing open', async () => {
    const world = await twoOrganizations('jwt', { organizations: organizations({ roles: CUSTOM_ROLES }) })
    for (const user of Object.values(USERS)) await world.adapter.updateUser({ id: user.id, emailVerified: new Date() })
    await activate(world.bob, GLOBEX)
    expect((await invite(world.bob, USERS.alice.email)).status).toBe(503)
    expect(loggedMessages({ ...world, mails: [] })).toContain(
      'organisation invitations have no way to send e-mail: give organizations({ invitations: { send } }), or configure an e-mail provider',
    )
  })
})

describe('the error page of each refusal of the link\'s page', () => {
  it('a forged token: Verification; the other address: AccessDenied', async () => {
    const { alice, bob, link } = await invited()
    expect(errorOf(await answerFromPage(alice, 'accept', { id: link.id, token: '0'.repeat(64) }))).toBe('Verification')
    expect(errorOf(await answerFromPage(bob, 'accept', link))).toBe('AccessDenied')
  })

  it('an unverified address: AccessDenied', async () => {
    const { alice, link } = await invited({ verified: false })
    expect(errorOf(await answerFromPage(alice, 'accept', link))).toBe('AccessDenied')
  })

  it('an expired invitation: Verification', async () => {
    const { alice, link } = await invited({ invitations: { maxAge: 60 } })
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 })
    expect(errorOf(await answerFromPage(alice, 'accept', link))).toBe('Verification')
  })

  it('a suspended member, and an inviter no longer allowed: AccessDenied', async () => {
    const suspended = await invited()
    await suspended.adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'suspended', createdAt: new Date() })
    expect(errorOf(await answerFromPage(suspended.alice, 'accept', suspended.link))).toBe('AccessDenied')
    const orphaned = await invited()
    await orphaned.adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.bob.id, status: 'suspended' })
    expect(errorOf(await answerFromPage(orphaned.alice, 'accept', orphaned.link))).toBe('AccessDenied')
  })

  it('a revocation by a member not allowed to: AccessDenied', async () => {
    const world = await invitationWorld()
    await activate(world.alice, ACME)
    await activate(world.bob, ACME)
    expect((await invite(world.alice, 'carol@example.test')).status).toBe(201)
    const { id } = linkOf(world.mails.at(-1)!)
    const csrfToken = await world.bob.csrfToken()
    const posted = await world.bob.send({ method: 'POST', path: '/organization/invitation', body: { action: 'revoke', id, csrfToken } })
    expect(errorOf(posted)).toBe('AccessDenied')
    expect((await world.adapter.getInvitation(id))!.status).toBe('sent')
  })
})

describe('the checks behind the one-time settlement', () => {
  it('lets a suspended member decline (the acceptance checks are for acceptances)', async () => {
    const { adapter, alice, link, invitation } = await invited()
    await adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'suspended', createdAt: new Date() })
    expect((await answer(alice, 'decline', link)).status).toBe(200)
    expect((await invitation())!.status).toBe('declined')
  })

  it('tells an active member so, even once the inviter may no longer invite', async () => {
    const { adapter, alice, link } = await invited()
    await adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'admin', status: 'active', createdAt: new Date() })
    await adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.bob.id, status: 'removed' })
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 409, body: { error: 'AlreadyAMember' } })
  })

  it('refuses an invitation whose inviter has no membership at all', async () => {
    const world = await invitationWorld()
    const id = crypto.randomUUID()
    await world.adapter.createInvitation({
      id,
      organizationId: GLOBEX,
      email: USERS.alice.email,
      role: 'member',
      inviterId: 'u-nobody',
      expires: new Date(Date.now() + 60_000),
      status: 'sent',
      createdAt: new Date(),
    })
    expect(await answer(world.alice, 'accept', { id, token: await invitationToken(SECRET, id) })).toMatchObject({ status: 403, body: { error: 'Forbidden' } })
    expect(await world.adapter.getMembership(GLOBEX, USERS.alice.id)).toBeNull()
  })

  it('leaves a membership made active since the check as it is', async () => {
    const world = await invited()
    let reads = 0
    const racing = replacing(world.adapter as Adapter, 'getMembership', (original) => async (organizationId: string, userId: string) => {
      // The invitee check reads no membership; by the acceptance, another request made Alice an admin.
      if (userId === USERS.alice.id && reads++ === 0) {
        await world.adapter.createMembership({ organizationId, userId, role: 'admin', status: 'active', createdAt: new Date() })
        return null
      }
      return original(organizationId, userId)
    })
    expect(await answerThrough(world, racing, 'accept', world.link)).toMatchObject({ status: 409, body: { error: 'AlreadyAMember' } })
    expect(await world.membership()).toMatchObject({ role: 'admin', status: 'active' })
    expect((await world.invitation())!.status).toBe('sent')
  })

  it('refuses when a concurrent request made the member active between the read and the write', async () => {
    const world = await invited()
    let created = false
    const racing = new Proxy(world.adapter as Adapter, {
      get(target, key, receiver) {
        if (key === 'getMembership') {
          return async (organizationId: string, userId: string) => (!created && userId === USERS.alice.id ? null : world.adapter.getMembership(organizationId, userId))
        }
        if (key === 'createMembership') {
          return async () => {
            created = true
            await world.adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'admin', status: 'active', createdAt: new Date() })
            throw new Error('duplicate key')
          }
        }
        return Reflect.get(target, key, receiver)
      },
    })
    expect(await answerThrough(world, racing, 'accept', world.link)).toMatchObject({ status: 409, body: { error: 'AlreadyAMember' } })
    expect(await world.membership()).toMatchObject({ role: 'admin', status: 'active' })
  })

  for (const [change, settle] of [
    ['revoked', 'revoked'],
    ['accepted by another request', 'accepted'],
  ] as const) {
    it(`makes no member when the invitation was ${change} between the check and the settlement`, async () => {
      const world = await invited()
      let reads = 0
      const racing = replacing(world.adapter as Adapter, 'getInvitation', (original) => async (id: string) => {
        if (reads++ === 1) await world.adapter.settleInvitation({ id, status: settle, at: new Date() })
        return original(id)
      })
      expect(await answerThrough(world, racing, 'accept', world.link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
      expect((await world.membership())?.status).not.toBe('active')
    })
  }

  it('makes no member when the invitation is gone by the settlement', async () => {
    const world = await invited()
    let reads = 0
    const racing = replacing(world.adapter as Adapter, 'getInvitation', (original) => async (id: string) => (reads++ === 1 ? null : original(id)))
    expect(await answerThrough(world, racing, 'accept', world.link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect((await world.membership())?.status).not.toBe('active')
  })

  it('answers 503 when the membership vanishes while it is activated', async () => {
    const world = await invited()
    const vanishing = replacing(world.adapter as Adapter, 'updateMembership', (original) => async (update: { status?: string }) =>
      update.status === 'active' ? null : original(update as never),
    )
    expect((await answerThrough(world, vanishing, 'accept', world.link)).status).toBe(503)
    expect((await world.membership())?.status).not.toBe('active')
    expect(loggedMessages(world)).toContain('the membership vanished while it was activated')
  })
})

describe('an interrupted acceptance', () => {
  /** Alice's acceptance of `link` settled, its activation failed: 503. */
  async function interrupted(world: World, link: { id: string; token: string }) {
    const failing = replacing(world.adapter as Adapter, 'updateMembership', (original) => async (update: { status?: string }) => {
      if (update.status === 'active') throw new Error('connection lost')
      return original(update as never)
    })
    expect((await answerThrough(world, failing, 'accept', link)).status).toBe(503)
  }

  it('completes on retry for a removed member invited again', async () => {
    const world = await invited()
    await world.adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'removed', createdAt: new Date() })
    await interrupted(world, world.link)
    expect((await world.invitation())!.status).toBe('accepted')
    expect((await world.membership())!.status).toBe('invited')
    expect((await answer(world.alice, 'accept', world.link)).status).toBe(200)
    expect((await world.membership())!.status).toBe('active')
  })

  it('is completed by its own invitation only: another invitation accepted meanwhile leaves its marker', async () => {
    const world = await invited()
    await world.adapter.createOrganization({ id: 'org-initech', slug: 'initech', name: 'initech', verifiedDomains: [], metadata: {}, createdAt: new Date() })
    await world.adapter.createMembership({ organizationId: 'org-initech', userId: USERS.bob.id, role: 'owner', status: 'active', createdAt: new Date() })
    await activate(world.bob, 'org-initech')
    expect((await invite(world.bob, USERS.alice.email)).status).toBe(201)
    const other = linkOf(world.mails.at(-1)!)
    await interrupted(world, world.link)
    expect((await answer(world.alice, 'accept', other)).status).toBe(200)
    expect((await answer(world.alice, 'accept', world.link)).status).toBe(200)
    expect((await world.membership())!.status).toBe('active')
  })

  it('does not readmit a member removed after it', async () => {
    const world = await invited()
    await interrupted(world, world.link)
    await world.adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.alice.id, status: 'removed' })
    expect(await answer(world.alice, 'accept', world.link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect((await world.membership())!.status).toBe('removed')
  })

  it('is not made up by an accepted invitation with no membership behind it', async () => {
    const world = await invited()
    await world.adapter.settleInvitation({ id: world.link.id, status: 'accepted', at: new Date() })
    expect(await answer(world.alice, 'accept', world.link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect(await world.membership()).toBeNull()
  })

  it('does not come back once completed: a membership invited again keeps its role', async () => {
    const world = await invited()
    expect((await answer(world.alice, 'accept', world.link)).status).toBe(200)
    await world.adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'admin', status: 'invited' })
    expect(await answer(world.alice, 'accept', world.link)).toMatchObject({ status: 409, body: { error: 'NotPending' } })
    expect(await world.membership()).toMatchObject({ role: 'admin', status: 'invited' })
  })
})

describe('the request', () => {
  it('takes an id of up to 256 characters, named id or invitationId', async () => {
    const { alice, link, membership } = await invited()
    expect(await postJson(alice, 'invitation', { action: 'accept', id: 'x'.repeat(256), token: link.token })).toMatchObject({ status: 404 })
    expect(await postJson(alice, 'invitation', { action: 'accept', id: 'x'.repeat(257), token: link.token })).toMatchObject({ status: 400 })
    expect((await postJson(alice, 'invitation', { action: 'accept', invitationId: link.id, token: link.token })).status).toBe(200)
    expect((await membership())!.status).toBe('active')
  })

  it('answers an invitation sent by a form post in JSON', async () => {
    const world = await invitationWorld()
    await activate(world.bob, GLOBEX)
    const csrfToken = await world.bob.csrfToken()
    const sent = await world.bob.send({ method: 'POST', path: '/organization/invite', body: { email: USERS.alice.email, role: 'member', csrfToken } })
    expect(sent.status).toBe(201)
    expect(await sent.json()).toMatchObject({ invitation: { email: USERS.alice.email, status: 'sent' } })
    await activate(world.bob, ACME)
    const refused = await world.bob.send({ method: 'POST', path: '/organization/invite', body: { email: USERS.alice.email, role: 'member', csrfToken } })
    expect(refused.status).toBe(403)
    expect(await refused.json()).toEqual({ error: 'Forbidden' })
  })

  it('sends a signed-out form post to sign in and back to the same link', async () => {
    const { config, link } = await invited()
    const posted = await answerFromPage(new Client(config), 'accept', link)
    const back = new URL(new URL(posted.headers.get('location')!).searchParams.get('callbackUrl')!)
    expect(back.searchParams.get('id')).toBe(link.id)
    expect(back.searchParams.get('token')).toBe(link.token)
  })

  it('names the failure of a part that failed: 503 Unavailable', async () => {
    const world = await invited()
    const broken = replacing(world.adapter as Adapter, 'getUser', () => async () => {
      throw new Error('connection lost')
    })
    expect(await answerThrough(world, broken, 'accept', world.link)).toMatchObject({ status: 503, body: { error: 'Unavailable' } })
  })
})

describe('the link\'s page', () => {
  it('shows the signed-in address and two forms posting the answer with the CSRF token', async () => {
    const { alice, link } = await invited()
    const html = await (await alice.send({ path: '/organization/invitation', query: { id: link.id, token: link.token } })).text()
    expect(html).toContain('<title>Invitation')
    expect(html).toContain('<h1>Join the organisation</h1>')
    expect(html).toContain(`<strong class="address">${USERS.alice.email}</strong>`)
    expect(html.match(/<form action="https:\/\/authchart\.test\/auth\/organization\/invitation" method="POST"><input type="hidden" name="csrfToken" value="[^"]+">/g)).toHaveLength(2)
    expect(html).toContain('name="action" value="decline"')
    expect(html).toContain('<button id="acceptButton" type="submit"><span>Accept the invitation</span></button></form>')
    expect(html).toContain('<button id="declineButton" type="submit"><span>Decline</span></button></form>')
  })

  it('goes back to the site after the answer, not to the callback URL the sign-in remembered', async () => {
    const { alice, link } = await invited()
    alice.jar.cookies.set('__Secure-authjs.callback-url', 'https://authchart.test/elsewhere')
    const html = await (await alice.send({ path: '/organization/invitation', query: { id: link.id, token: link.token } })).text()
    expect(html).toContain('name="callbackUrl" value="https://authchart.test"')
    expect(html).not.toContain('/elsewhere')
  })

  it('carries an empty id and token when the link has none', async () => {
    const { alice } = await invited()
    const html = await (await alice.send({ path: '/organization/invitation' })).text()
    expect(html).toContain('name="id" value=""')
    expect(html).toContain('name="token" value=""')
  })
})

describe('the refusals of a page answer (module level)', () => {
  async function pageRun(world: World, user: 'alice' | 'bob', organizationId: string, event: Record<string, unknown>) {
    const resolved = assertConfig(world.config)
    const base = { config: resolved, cookies: resolved.cookies.secure } as unknown as RequestContext
    const cookies = { [activeOrganizationCookieName(base)]: await signActiveOrganization(resolved, USERS[user].id, organizationId) }
    const at = Math.floor(Date.now() / 1000)
    const ctx = {
      ...base,
      at,
      logger: resolved.logger,
      adapter: resolved.adapter,
      origin: ORIGIN,
      authUrl: `${ORIGIN}/auth`,
      callbackUrl: ORIGIN,
      setCookies: [],
      request: { method: 'POST', query: {}, cookies, providerId: 'invitation' },
      raw: new Request(`${ORIGIN}/auth/organization/invite`, { method: 'POST' }),
    } as unknown as RequestContext
    return (await advance(organizationInvitationFlow, ctx, { at, userId: USERS[user].id, answer: 'page', answerUrl: ORIGIN, ...event } as never)).outcome
  }

  it('sends a refused invitation to the AccessDenied page, with the wait of a limit', async () => {
    const world = await invitationWorld({ invitations: { limit: { perInviter: 1 } } })
    const send = (user: 'alice' | 'bob', organizationId: string, email: string, role = 'member') =>
      pageRun(world, user, organizationId, { type: 'invitation.send', email, role })
    expect(await send('bob', ACME, 'carol@example.test')).toStrictEqual({ type: 'error', error: 'AccessDenied' })
    expect(await send('bob', GLOBEX, 'not an address')).toStrictEqual({ type: 'error', error: 'AccessDenied' })
    expect(await send('bob', GLOBEX, 'carol@example.test')).toMatchObject({ type: 'json', status: 201 })
    expect(await send('bob', GLOBEX, 'dave@example.test')).toStrictEqual({ type: 'error', error: 'AccessDenied', retryAfter: expect.any(Number) })
  })

  it('adds no retryAfter to a JSON refusal that has none', async () => {
    const world = await invitationWorld()
    const resolved = assertConfig(world.config)
    const base = { config: resolved, cookies: resolved.cookies.secure } as unknown as RequestContext
    const cookies = { [activeOrganizationCookieName(base)]: await signActiveOrganization(resolved, USERS.bob.id, ACME) }
    const at = Math.floor(Date.now() / 1000)
    const ctx = { ...base, at, logger: resolved.logger, adapter: resolved.adapter, origin: ORIGIN, authUrl: `${ORIGIN}/auth`, callbackUrl: ORIGIN, setCookies: [], request: { method: 'POST', body: {}, query: {}, cookies }, raw: new Request(ORIGIN) } as unknown as RequestContext
    const ran = await advance(organizationInvitationFlow, ctx, { type: 'invitation.send', at, userId: USERS.bob.id, answer: 'json', answerUrl: '', email: 'carol@example.test', role: 'member' } as never)
    expect((ran.outcome as { body: unknown }).body).toStrictEqual({ error: 'Forbidden' })
  })
})

