/**
 * The invitation flow at the module level, two users and two organisations in every test: the
 * engine runs the chart with a request context built here (no HTTP), so the invariants hold
 * whichever route or integration starts the flow. Bob owns Globex and invites Alice's address;
 * Alice owns Acme, where Bob is a plain member. Also the graph: only the proven invitee's answer
 * reaches the state that makes a member.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { organizationInvitationChart } from '../../core/charts/organization-invitation.js'
import { assertConfig } from '../../core/index.js'
import { advance } from '../../core/engine/advance.js'
import type { RequestContext } from '../../core/config/types.js'
import { activeOrganizationCookieName, signActiveOrganization } from '../../core/organizations/active.js'
import { invitationToken, organizationInvitationFlow } from '../../core/organizations/invitations.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { GRANTS_MEMBERSHIP_TAG } from '../../machines/organization-invitation.logic.js'
import { organizationInvitationMachine } from '../../machines/organization-invitation.machine.js'
import { ORIGIN, SECRET } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS } from './fixture.js'
import { invitationWorld } from './invitation-fixture.js'

type User = keyof typeof USERS
type World = Awaited<ReturnType<typeof invitationWorld>>

const clock = { offset: 0 }
afterEach(() => {
  clock.offset = 0
})

/** The request context of `user`, active in `organizationId`, under `config`. */
async function contextOf(config: World['config'], user: User, organizationId: string | null): Promise<RequestContext> {
  const resolved = assertConfig(config)
  const base = { config: resolved, cookies: resolved.cookies.secure } as unknown as RequestContext
  const cookies: Record<string, string> = {}
  if (organizationId) cookies[activeOrganizationCookieName(base)] = await signActiveOrganization(resolved, USERS[user].id, organizationId)
  return {
    ...base,
    at: Math.floor(Date.now() / 1000) + clock.offset,
    logger: resolved.logger,
    adapter: resolved.adapter,
    origin: ORIGIN,
    authUrl: `${ORIGIN}/auth`,
    callbackUrl: ORIGIN,
    setCookies: [],
    request: { method: 'POST', body: {}, query: {}, cookies, providerId: 'invitation' },
    raw: new Request(`${ORIGIN}/auth/organization/invitation`, { method: 'POST' }),
  } as unknown as RequestContext
}

/** Runs one request of the flow; its JSON answer. */
async function run(config: World['config'], user: User, organizationId: string | null, event: Record<string, unknown>) {
  const ctx = await contextOf(config, user, organizationId)
  const ran = await advance(organizationInvitationFlow, ctx, { at: ctx.at, userId: USERS[user].id, answer: 'json', answerUrl: '', ...event } as never)
  const outcome = ran.outcome as { type: string; status?: number; body?: Record<string, unknown> }
  expect(outcome.type).toBe('json')
  return { status: outcome.status, body: outcome.body }
}

const send = (config: World['config'], user: User, organizationId: string, email: string, role = 'member') =>
  run(config, user, organizationId, { type: 'invitation.send', email, role })
const respond = (config: World['config'], user: User, action: 'accept' | 'decline', link: { id: string; token: string }) =>
  run(config, user, null, { type: `invitation.${action}`, invitationId: link.id, token: link.token })
const revoke = (config: World['config'], user: User, organizationId: string, id: string) => run(config, user, organizationId, { type: 'invitation.revoke', invitationId: id })

/** Bob has invited Alice's address to Globex. */
async function invited(options: Parameters<typeof invitationWorld>[0] = {}) {
  const world = await invitationWorld(options)
  const sent = await send(world.config, 'bob', GLOBEX, USERS.alice.email)
  expect(sent.status).toBe(201)
  const id = (sent.body!.invitation as { id: string }).id
  const link = { id, token: await invitationToken(SECRET, id) }
  expect(new URL(world.mails.at(-1)!.url).searchParams.get('token')).toBe(link.token)
  return { ...world, link, membership: () => world.adapter.getMembership(GLOBEX, USERS.alice.id), invitation: () => world.adapter.getInvitation(id) }
}

describe('the invitation flow (module level, attacks)', () => {
  it('lets only the invited, verified address accept', async () => {
    const { config, link, membership } = await invited()
    expect(await respond(config, 'bob', 'accept', link)).toEqual({ status: 403, body: { error: 'WrongAddress' } })
    expect(await membership()).toBeNull()
    expect((await respond(config, 'alice', 'accept', link)).status).toBe(200)
    expect((await membership())!.status).toBe('active')
  })

  it('refuses an unverified address', async () => {
    const { config, link, membership } = await invited({ verified: false })
    expect(await respond(config, 'alice', 'accept', link)).toEqual({ status: 403, body: { error: 'AddressNotVerified' } })
    expect(await membership()).toBeNull()
  })

  it('accepts once, also when two answers race', async () => {
    const { config, link, membership } = await invited()
    const raced = await Promise.all([respond(config, 'alice', 'accept', link), respond(config, 'alice', 'accept', link)])
    expect(raced.map((answer) => answer.status).sort()).toEqual([200, 409])
    expect(await respond(config, 'alice', 'accept', link)).toEqual({ status: 409, body: { error: 'NotPending' } })
    expect((await membership())!.status).toBe('active')
  })

  it('lifts no suspension, and grants nothing once the inviter is no longer an active member', async () => {
    const suspended = await invited()
    await suspended.adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'suspended', createdAt: new Date() })
    expect(await respond(suspended.config, 'alice', 'accept', suspended.link)).toEqual({ status: 403, body: { error: 'Forbidden' } })
    expect((await suspended.membership())!.status).toBe('suspended')
    const orphaned = await invited()
    await orphaned.adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.bob.id, status: 'suspended' })
    expect(await respond(orphaned.config, 'alice', 'accept', orphaned.link)).toEqual({ status: 403, body: { error: 'Forbidden' } })
    expect(await orphaned.membership()).toBeNull()
    expect((await orphaned.invitation())!.status).toBe('sent')
  })

  it('refuses after expiry, and settles the invitation as expired', async () => {
    const { config, link, membership, invitation } = await invited({ invitations: { maxAge: 60 } })
    clock.offset = 60
    expect(await respond(config, 'alice', 'accept', link)).toEqual({ status: 410, body: { error: 'Expired' } })
    expect((await invitation())!.status).toBe('expired')
    expect(await membership()).toBeNull()
  })

  it('refuses after revocation; revokes only by a member allowed to, of the same organisation', async () => {
    const { config, adapter, link, membership, invitation } = await invited()
    // Alice, owner of Acme, reaches no invitation of Globex by its id.
    expect(await revoke(config, 'alice', ACME, link.id)).toEqual({ status: 404, body: { error: 'NotFound' } })
    // A plain member of Globex may not revoke.
    await adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'active', createdAt: new Date() })
    expect(await revoke(config, 'alice', GLOBEX, link.id)).toEqual({ status: 403, body: { error: 'Forbidden' } })
    await adapter.updateMembership({ organizationId: GLOBEX, userId: USERS.alice.id, status: 'removed' })
    expect((await invitation())!.status).toBe('sent')
    expect((await revoke(config, 'bob', GLOBEX, link.id)).status).toBe(200)
    expect(await respond(config, 'alice', 'accept', link)).toEqual({ status: 409, body: { error: 'NotPending' } })
    expect((await membership())!.status).toBe('removed')
  })

  it('lets only a member with invitation:create invite, never above their own role, only in their active organisation', async () => {
    const { config, adapter, mails } = await invitationWorld()
    expect(await send(config, 'bob', ACME, 'carol@example.test')).toEqual({ status: 403, body: { error: 'Forbidden' } })
    // Alice is no member of Globex: a signed cookie naming it is no active organisation.
    expect(await send(config, 'alice', GLOBEX, 'carol@example.test')).toEqual({ status: 403, body: { error: 'NoActiveOrganization' } })
    await adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'admin' })
    expect((await send(config, 'bob', ACME, 'carol@example.test', 'owner')).status).toBe(403)
    expect(mails).toEqual([])
    expect((await send(config, 'bob', ACME, 'carol@example.test', 'admin')).status).toBe(201)
  })

  it('counts per inviter and per organisation on the shared store, across two instances', async () => {
    const store = memoryAuthStore()
    const limits = { invitations: { limit: { perInviter: 1, perOrganization: 2 } }, overrides: { store } }
    const first = await invitationWorld(limits)
    const second = await invitationWorld({ ...limits, overrides: { store, adapter: first.adapter } })
    await first.adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, role: 'admin' })
    expect((await send(first.config, 'alice', ACME, 'c1@example.test')).status).toBe(201)
    expect(await send(second.config, 'alice', ACME, 'c2@example.test')).toMatchObject({ status: 429, body: { error: 'TooManyInvitations' } })
    // Acme's two attempts are spent: Bob, with a budget of his own, is refused in Acme.
    expect((await send(second.config, 'bob', ACME, 'c3@example.test')).status).toBe(429)
  })
})

describe('the invitation chart (graph)', () => {
  it('makes a member in one state only, reached only from the invitee check of an acceptance', () => {
    const granting = Object.values(organizationInvitationChart.states).filter((state) => state.effect === 'acceptInvitation')
    expect(granting.map((state) => state.key)).toEqual(['answering.accepting'])
    const into = Object.values(organizationInvitationChart.states).flatMap((state) =>
      Object.entries(state.transitions).flatMap(([event, transitions]) =>
        transitions.filter((transition) => transition.target === 'answering.accepting').map((transition) => ({ from: state.key, event, guarded: transition.guard !== undefined })),
      ),
    )
    expect(into).toEqual([{ from: 'answering.checkingInvitee', event: 'checkInvitee.done', guarded: true }])
    const tagged = organizationInvitationMachine.root.states.answering!.states.accepting!.tags
    expect([...tagged]).toContain(GRANTS_MEMBERSHIP_TAG)
  })
})
