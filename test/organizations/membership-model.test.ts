/**
 * Every transition of the organisation membership chart, for every kind of change, driven through
 * `Auth` with two users and two organisations: Alice (owner of Acme) acts on Bob (a member of Acme,
 * owner of Globex). Each effect's success and each of its failures is arranged in the world: a
 * forged organisation id, a malformed request, a member of another organisation or a taken slug,
 * an adapter method that throws, a compare-and-set lost to a concurrent change, a former owner who
 * cannot step down.
 */
import { expect } from 'vitest'
import { organizationMembershipMachine } from '../../machines/organization-membership.machine.js'
import type { Adapter } from '../../core/adapters.js'
import type { AuthConfig } from '../../core/types.js'
import { describeModel } from '../machines/harness.js'
import { Client } from '../fixtures/http.js'
import { ACME, GLOBEX, USERS, setActive, twoOrganizations } from './fixture.js'

const CAROL = 'u-carol'
const WRITES = ['changeMembership', 'updateOrganization', 'deleteOrganization'] as const

interface World {
  /** The body names Globex while Alice acts in Acme. */
  forged: boolean
  /** A malformed request: no member named, an unknown role, a malformed slug. */
  malformed: boolean
  /** The member named is Globex's only (or, updating, the slug is Globex's). */
  elsewhere: boolean
  /** Which adapter methods throw: the reads of the check, or the writes. */
  broken: 'none' | 'reads' | 'writes'
  /** A concurrent change wins the compare-and-set (or deleted, or changed the organisation). */
  lost: boolean
  /** The former owner's step down throws (a transfer's second write). */
  stepDown: 'works' | 'throws'
}

type Base = Awaited<ReturnType<typeof twoOrganizations>>

/** The configuration as the world wants it, over `base`'s adapter. */
function configOf(world: World, base: Base, inspect: AuthConfig['inspect']): AuthConfig {
  let writes = 0
  const adapter = new Proxy(base.adapter as Adapter, {
    get(target, key, receiver) {
      const method = Reflect.get(target, key, receiver)
      if (world.broken === 'reads' && key === 'getMembership') return async () => Promise.reject(new TypeError('the adapter cannot read memberships'))
      if (!(WRITES as readonly PropertyKey[]).includes(key)) return method
      return async (...args: unknown[]) => {
        writes++
        if (world.broken === 'writes' || (world.stepDown === 'throws' && writes > 1)) throw new TypeError(`the adapter's ${String(key)} is broken`)
        if (world.lost) return key === 'changeMembership' ? { refused: 'Changed' } : key === 'updateOrganization' ? null : false
        return (method as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { ...base.config, adapter, inspect }
}

/** `client`'s cookies on a client of `config`. */
function sameBrowser(client: Client, config: AuthConfig): Client {
  const copy = new Client(config as Client['config'])
  for (const [name, value] of client.jar.cookies) copy.jar.cookies.set(name, value)
  return copy
}

/** Alice, active in Acme, posts `segment` with the body the world makes of `body`. */
async function change(world: World, inspect: AuthConfig['inspect'], segment: string, body: Record<string, unknown>, bobIs: { role?: string; status?: 'suspended' } = {}) {
  const base = await twoOrganizations()
  await base.adapter.createUser({ id: CAROL, email: 'carol@example.test', emailVerified: null })
  await base.adapter.createMembership({ organizationId: GLOBEX, userId: CAROL, role: 'member', status: 'active', createdAt: new Date() })
  if (bobIs.role || bobIs.status) await base.adapter.updateMembership({ organizationId: ACME, userId: USERS.bob.id, ...bobIs })
  expect((await setActive(base.alice, { organizationId: ACME })).response.status).toBe(200)
  const alice = sameBrowser(base.alice, configOf(world, base, inspect))
  const sent: Record<string, unknown> = { ...body, ...(world.forged ? { organizationId: GLOBEX } : {}) }
  if (world.malformed) {
    if (segment === 'update') sent.slug = 'Not A Slug'
    else if (segment === 'role') sent.role = 'root'
    else delete sent.userId
  }
  if (world.elsewhere) {
    if (segment === 'update') sent.slug = 'globex'
    else sent.userId = CAROL
  }
  const response = await alice.send({ method: 'POST', path: `/organization/${segment}`, json: { ...sent, csrfToken: await alice.csrfToken() } })
  return response
}

const onBob = { userId: USERS.bob.id }

/** 200 with the membership of Bob (or Alice) as the change left it. */
const membershipIs = (expected: Record<string, unknown>) => async (response: Response) => {
  expect(response.status).toBe(200)
  expect(((await response.json()) as { membership: unknown }).membership).toMatchObject({ organizationId: ACME, ...expected })
}

describeModel<World>('the organisation membership', {
  machine: organizationMembershipMachine,
  samples: [
    { type: 'member.suspend', at: 0, userId: 'u', organizationId: null, targetId: 't' },
    { type: 'member.reinstate', at: 0, userId: 'u', organizationId: null, targetId: 't' },
    { type: 'member.remove', at: 0, userId: 'u', organizationId: null, targetId: 't' },
    { type: 'member.leave', at: 0, userId: 'u', organizationId: null },
    { type: 'member.role', at: 0, userId: 'u', organizationId: null, targetId: 't', role: 'admin' },
    { type: 'member.transfer', at: 0, userId: 'u', organizationId: null, targetId: 't' },
    { type: 'organization.update', at: 0, userId: 'u', organizationId: null, changes: { name: 'Acme Corp' } },
    { type: 'organization.delete', at: 0, userId: 'u', organizationId: null },
    { type: 'checkChange.done', at: 0, output: { organizationId: ACME, decided: { from: null, to: null, actorRole: 'owner' } } },
    { type: 'checkChange.failed', at: 0, reason: 'forbidden', error: 'AccessDenied', code: 'NotActiveOrganization' },
    { type: 'checkChange.failed', at: 0, reason: 'invalid', error: 'AccessDenied', code: 'InvalidRequest' },
    { type: 'checkChange.failed', at: 0, reason: 'refused', error: 'AccessDenied', code: 'NotAMember' },
    { type: 'checkChange.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'applyChange.done', at: 0, output: { membership: null, organization: null } },
    { type: 'applyChange.failed', at: 0, reason: 'refused', error: 'AccessDenied', code: 'Changed' },
    { type: 'applyChange.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'stepDown.done', at: 0, output: { membership: { organizationId: ACME, userId: 'u', role: 'admin', status: 'active' } } },
    { type: 'stepDown.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
  ],
  onlySamples: true,
  // Leaving and deleting name no member and no field: neither is malformed, nor names another organisation's member.
  possible: (snapshot, event) =>
    !(event.type === 'checkChange.failed' && (event.reason === 'invalid' || event.reason === 'refused') && ['leave', 'delete'].includes(String(snapshot.context.intent))),
  world: () => ({ forged: false, malformed: false, elsewhere: false, broken: 'none', lost: false, stepDown: 'works' }),
  arrange: {
    'checkChange.done': () => {},
    'checkChange.failed': (world, event) => {
      if (event.reason === 'forbidden') world.forged = true
      if (event.reason === 'invalid') world.malformed = true
      if (event.reason === 'refused') world.elsewhere = true
      if (event.reason === 'threw') world.broken = 'reads'
    },
    'applyChange.done': () => {},
    'applyChange.failed': (world, event) => {
      if (event.reason === 'refused') world.lost = true
      else world.broken = 'writes'
    },
    'stepDown.done': () => {},
    'stepDown.failed': (world) => {
      world.stepDown = 'throws'
    },
  },
  send: {
    'member.suspend': (world, _event, inspect) => change(world, inspect, 'suspend', onBob),
    'member.reinstate': (world, _event, inspect) => change(world, inspect, 'reinstate', onBob, { status: 'suspended' }),
    'member.remove': (world, _event, inspect) => change(world, inspect, 'remove', onBob),
    // Alice may leave once Bob is an owner too.
    'member.leave': (world, _event, inspect) => change(world, inspect, 'leave', {}, { role: 'owner' }),
    'member.role': (world, _event, inspect) => change(world, inspect, 'role', { ...onBob, role: 'admin' }),
    'member.transfer': (world, _event, inspect) => change(world, inspect, 'transfer', onBob),
    'organization.update': (world, _event, inspect) => change(world, inspect, 'update', { name: 'Acme Corp' }),
    'organization.delete': (world, _event, inspect) => change(world, inspect, 'delete', {}),
  },
  expect: {
    suspended: membershipIs({ userId: USERS.bob.id, status: 'suspended' }),
    reinstated: membershipIs({ userId: USERS.bob.id, status: 'active' }),
    removed: membershipIs({ userId: USERS.bob.id, status: 'removed' }),
    left: membershipIs({ userId: USERS.alice.id, status: 'removed' }),
    roleChanged: membershipIs({ userId: USERS.bob.id, role: 'admin' }),
    transferred: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ membership: { userId: USERS.bob.id, role: 'owner' }, formerOwner: { userId: USERS.alice.id, role: 'admin' } })
    },
    updated: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ organization: { id: ACME, name: 'Acme Corp' } })
    },
    deleted: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ deleted: { id: ACME } })
    },
    forbidden: async (response) => {
      expect(response.status).toBe(403)
      expect(await response.json()).toEqual({ error: 'NotActiveOrganization' })
    },
    invalid: (response) => {
      expect(response.status).toBe(400)
    },
    refused: async (response) => {
      expect([404, 409]).toContain(response.status)
    },
    failed: (response) => {
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).not.toBeNull()
    },
  },
})
