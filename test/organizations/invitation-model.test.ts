/**
 * Every transition of the organisation invitation chart, driven through `Auth` with two users and
 * two organisations: Bob (owner of Globex) invites, Alice's address is the invited one. Each
 * effect's success and each of its failures is arranged in the world: a plain member, a malformed
 * address, a spent limit, a broken store, sender or adapter method, a made-up token, an expired
 * invitation, a settlement lost to a concurrent one.
 */
import { expect } from 'vitest'
import { organizationInvitationMachine } from '../../machines/organization-invitation.machine.js'
import { invitationToken } from '../../core/organizations/invitations.js'
import type { Adapter } from '../../core/adapters.js'
import type { AuthStore } from '../../core/store/types.js'
import type { AuthConfig } from '../../core/types.js'
import { describeModel } from '../machines/harness.js'
import { Client, SECRET } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS } from './fixture.js'
import { activate, answer, invitationWorld, invite, revoke } from './invitation-fixture.js'

type Broken = 'none' | 'getInvitation' | 'settleInvitation' | 'createMembership'

interface World {
  inviter: 'owner' | 'member'
  email: string
  store: 'open' | 'limited' | 'broken'
  sender: 'works' | 'throws'
  token: 'issued' | 'made-up'
  expired: boolean
  /** A concurrent request settles the invitation first. */
  settlement: 'won' | 'lost'
  revoker: 'owner' | 'member'
  broken: Broken
}

type InvitationWorld = Awaited<ReturnType<typeof invitationWorld>>

/** The configuration as the world wants it, over `base`'s adapter and store. */
function configOf(world: World, base: InvitationWorld, inspect: AuthConfig['inspect']) {
  const adapter = new Proxy(base.adapter as Adapter, {
    get(target, key, receiver) {
      if (key === world.broken) return async () => Promise.reject(new TypeError(`the adapter's ${String(key)} is broken`))
      if (key === 'settleInvitation' && world.settlement === 'lost') return async () => null
      return Reflect.get(target, key, receiver)
    },
  })
  const inner = (base.config as { store: AuthStore }).store
  const store: AuthStore = {
    ...inner,
    consume: async (key, points, window) => {
      if (world.store === 'limited') return { allowed: false, count: points + 1, retryAfter: 30 }
      if (world.store === 'broken') throw new TypeError('the limiter is misconfigured')
      return inner.consume(key, points, window)
    },
  }
  return { ...base.config, adapter, store, inspect }
}

/** `client`'s cookies on a client of `config`. */
function sameBrowser(client: Client, config: Client['config']): Client {
  const copy = new Client(config)
  for (const [name, value] of client.jar.cookies) copy.jar.cookies.set(name, value)
  return copy
}

/** A world where Bob has invited Alice's address to Globex (stored directly: the request under test is the answer). */
async function withInvitation(world: World) {
  const base = await invitationWorld({
    invitations: { send: world.sender === 'throws' ? () => Promise.reject(new Error('SMTP down')) : undefined },
  })
  const id = crypto.randomUUID()
  const now = Date.now()
  await base.adapter.createInvitation({
    id,
    organizationId: GLOBEX,
    email: USERS.alice.email,
    role: 'member',
    inviterId: USERS.bob.id,
    expires: new Date(world.expired ? now - 1000 : now + 3_600_000),
    status: 'sent',
    createdAt: new Date(now),
  })
  const token = world.token === 'issued' ? await invitationToken(SECRET, id) : 'f'.repeat(64)
  return { base, link: { id, token } }
}

const statusIs = (status: number) => (response: Response) => expect(response.status).toBe(status)
const asResponse = (answered: { status: number; headers: Headers; body: unknown }) =>
  new Response(JSON.stringify(answered.body), { status: answered.status, headers: answered.headers })

describeModel<World>(
  'the organisation invitation',
  {
    machine: organizationInvitationMachine,
    samples: [
      { type: 'invitation.send', at: 0, userId: 'u', answer: 'json', answerUrl: '', email: 'carol@example.test', role: 'member' },
      { type: 'invitation.accept', at: 0, userId: 'u', answer: 'json', answerUrl: '', invitationId: 'i', token: 't' },
      { type: 'invitation.decline', at: 0, userId: 'u', answer: 'json', answerUrl: '', invitationId: 'i', token: 't' },
      { type: 'invitation.revoke', at: 0, userId: 'u', answer: 'json', answerUrl: '', invitationId: 'i' },
      { type: 'admitInvitation.done', at: 0, output: { organizationId: GLOBEX, email: 'carol@example.test' } },
      { type: 'admitInvitation.failed', at: 0, reason: 'forbidden', error: 'AccessDenied', code: 'Forbidden' },
      { type: 'admitInvitation.failed', at: 0, reason: 'invalid', error: 'AccessDenied', code: 'InvalidRequest' },
      { type: 'admitInvitation.failed', at: 0, reason: 'limited', error: 'AccessDenied', code: 'TooManyInvitations', retryAfter: 30 },
      { type: 'admitInvitation.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'sendInvitation.done', at: 0, output: { invitationId: 'i', expires: 0 } },
      { type: 'sendInvitation.failed', at: 0, reason: 'threw', error: 'EmailSignInError' },
      { type: 'checkInvitee.done', at: 0, output: { organizationId: GLOBEX, role: 'member' } },
      { type: 'checkInvitee.failed', at: 0, reason: 'refused', error: 'Verification', code: 'NotFound' },
      { type: 'checkInvitee.failed', at: 0, reason: 'expired', error: 'Verification', code: 'Expired' },
      { type: 'checkInvitee.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'expireInvitation.done', at: 0, output: null },
      { type: 'expireInvitation.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'acceptInvitation.done', at: 0, output: null },
      { type: 'acceptInvitation.failed', at: 0, reason: 'refused', error: 'Verification', code: 'NotPending' },
      { type: 'acceptInvitation.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'declineInvitation.done', at: 0, output: null },
      { type: 'declineInvitation.failed', at: 0, reason: 'refused', error: 'Verification', code: 'NotPending' },
      { type: 'declineInvitation.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'checkRevoker.done', at: 0, output: { organizationId: GLOBEX } },
      { type: 'checkRevoker.failed', at: 0, reason: 'forbidden', error: 'AccessDenied', code: 'Forbidden' },
      { type: 'checkRevoker.failed', at: 0, reason: 'refused', error: 'Verification', code: 'NotFound' },
      { type: 'checkRevoker.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
      { type: 'revokeInvitation.done', at: 0, output: null },
      { type: 'revokeInvitation.failed', at: 0, reason: 'refused', error: 'Verification', code: 'NotPending' },
      { type: 'revokeInvitation.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    ],
    onlySamples: true,
    world: () => ({
      inviter: 'owner',
      email: 'carol@example.test',
      store: 'open',
      sender: 'works',
      token: 'issued',
      expired: false,
      settlement: 'won',
      revoker: 'owner',
      broken: 'none',
    }),
    arrange: {
      'admitInvitation.done': () => {},
      'admitInvitation.failed': (world, event) => {
        if (event.reason === 'forbidden') world.inviter = 'member'
        if (event.reason === 'invalid') world.email = 'not an address'
        if (event.reason === 'limited') world.store = 'limited'
        if (event.reason === 'threw') world.store = 'broken'
      },
      'sendInvitation.done': () => {},
      'sendInvitation.failed': (world) => {
        world.sender = 'throws'
      },
      'checkInvitee.done': () => {},
      'checkInvitee.failed': (world, event) => {
        if (event.reason === 'refused') world.token = 'made-up'
        if (event.reason === 'expired') world.expired = true
        if (event.reason === 'threw') world.broken = 'getInvitation'
      },
      'expireInvitation.done': () => {},
      'expireInvitation.failed': (world) => {
        world.broken = 'settleInvitation'
      },
      'acceptInvitation.done': () => {},
      'acceptInvitation.failed': (world, event) => {
        if (event.reason === 'refused') world.settlement = 'lost'
        else world.broken = 'createMembership'
      },
      'declineInvitation.done': () => {},
      'declineInvitation.failed': (world, event) => {
        if (event.reason === 'refused') world.settlement = 'lost'
        else world.broken = 'settleInvitation'
      },
      'checkRevoker.done': () => {},
      'checkRevoker.failed': (world, event) => {
        if (event.reason === 'forbidden') world.revoker = 'member'
        if (event.reason === 'refused') world.token = 'made-up'
        if (event.reason === 'threw') world.broken = 'getInvitation'
      },
      'revokeInvitation.done': () => {},
      'revokeInvitation.failed': (world, event) => {
        if (event.reason === 'refused') world.settlement = 'lost'
        else world.broken = 'settleInvitation'
      },
    },
    send: {
      'invitation.send': async (world, _event, inspect) => {
        const { base } = await withInvitation(world)
        // A plain member of Acme invites nobody; the owner of Globex may.
        await activate(base.bob, world.inviter === 'owner' ? GLOBEX : ACME)
        const bob = sameBrowser(base.bob, configOf(world, base, inspect))
        return asResponse(await invite(bob, world.email))
      },
      'invitation.accept': async (world, _event, inspect) => {
        const { base, link } = await withInvitation(world)
        return asResponse(await answer(sameBrowser(base.alice, configOf(world, base, inspect)), 'accept', link))
      },
      'invitation.decline': async (world, _event, inspect) => {
        const { base, link } = await withInvitation(world)
        return asResponse(await answer(sameBrowser(base.alice, configOf(world, base, inspect)), 'decline', link))
      },
      'invitation.revoke': async (world, _event, inspect) => {
        const { base, link } = await withInvitation(world)
        let revoker = base.bob
        if (world.revoker === 'member') {
          await base.adapter.createMembership({ organizationId: GLOBEX, userId: USERS.alice.id, role: 'member', status: 'active', createdAt: new Date() })
          revoker = base.alice
        }
        await activate(revoker, GLOBEX)
        const id = world.token === 'issued' ? link.id : crypto.randomUUID()
        return asResponse(await revoke(sameBrowser(revoker, configOf(world, base, inspect)), id))
      },
    },
    expect: {
      sent: statusIs(201),
      accepted: async (response) => {
        expect(response.status).toBe(200)
        expect(await response.json()).toMatchObject({ membership: { organizationId: GLOBEX, userId: USERS.alice.id, status: 'active' } })
      },
      declined: statusIs(200),
      revoked: statusIs(200),
      expired: statusIs(410),
      refused: (response) => {
        expect([404, 409]).toContain(response.status)
      },
      forbidden: statusIs(403),
      invalid: statusIs(400),
      limited: (response) => {
        expect(response.status).toBe(429)
        expect(response.headers.get('retry-after')).toBe('30')
      },
      failed: (response) => {
        expect(response.status).toBe(503)
        expect(response.headers.get('retry-after')).not.toBeNull()
      },
    },
  },
)
