/**
 * Organisations when the database is out: every permission check, session read and management
 * route that needs a membership fails closed. An adapter call that throws or hangs past its
 * deadline never grants a permission, never reports an organisation the session no longer has,
 * and answers the routes 503 with Retry-After, changing nothing. Two users, two organisations.
 */
import { describe, expect, it } from 'vitest'
import type { Adapter } from '../../core/adapters.js'
import type { MemoryAdapter } from '../../adapters/memory.js'
import { activeOrganization, can } from '../../core/organizations.js'
import { ACME, GLOBEX, USERS, appRequest, sessionOrganization, setActive, twoOrganizations } from './fixture.js'

/** An outage as `pg` reports one: the connection refused. */
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432 (password=hunter2)'), { code: 'ECONNREFUSED' })
const never = () => new Promise<never>(() => {})
const as = (user: keyof typeof USERS, activeOrganizationId: string) => ({ user: { id: USERS[user].id }, activeOrganizationId })

/**
 * The adapter the config gets: the memory adapter, except that `methods` fail as `faults.how` says
 * while it is set (`undefined`: they answer).
 */
function faulty(methods: (keyof Adapter)[]) {
  const faults: { how?: 'throws' | 'hangs' } = {}
  const wrap = (adapter: ReturnType<typeof MemoryAdapter>) => {
    const wrapped = { ...adapter }
    for (const name of methods) {
      const method = adapter[name] as (...args: unknown[]) => Promise<unknown>
      ;(wrapped as Record<string, unknown>)[name] = (...args: unknown[]) =>
        faults.how === 'throws' ? Promise.reject(refused()) : faults.how === 'hangs' ? never() : method.apply(adapter, args)
    }
    return wrapped
  }
  return { faults, wrap }
}

describe.each(['throws', 'hangs'] as const)('organisations when the adapter %s', (how) => {
  const availability = { adapterTimeout: 150, retryAfter: 7 }

  it('can() grants nothing: it rejects, for a request and for a session object, and answers again once the adapter is back', async () => {
    const { faults, wrap } = faulty(['getMembership', 'getOrganization'])
    const { config, alice } = await twoOrganizations('jwt', (adapter) => ({ availability, adapter: wrap(adapter) }))
    expect((await setActive(alice, { organizationId: ACME })).response.status).toBe(200)
    expect(await can(appRequest(alice), 'member:remove', config)).toBe(true)
    faults.how = how
    await expect(can(appRequest(alice), 'member:remove', config)).rejects.toThrow()
    await expect(can(as('alice', ACME), 'member:remove', config)).rejects.toThrow()
    await expect(activeOrganization(as('alice', ACME), config)).rejects.toThrow()
    // Bob, who may not, is not let through by the outage either.
    await expect(can(as('bob', ACME), 'member:remove', config)).rejects.toThrow()
    faults.how = undefined
    expect(await can(appRequest(alice), 'member:remove', config)).toBe(true)
    expect(await can(as('bob', ACME), 'member:remove', config)).toBe(false)
  })

  it("the session read answers 503 with Retry-After instead of the organisation it can no longer check", async () => {
    const { faults, wrap } = faulty(['getMembership', 'getOrganization'])
    const { alice } = await twoOrganizations('jwt', (adapter) => ({ availability, adapter: wrap(adapter) }))
    expect((await setActive(alice, { organizationId: ACME })).response.status).toBe(200)
    expect(await sessionOrganization(alice)).toBe(ACME)
    faults.how = how
    const { response } = await alice.session()
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('7')
    faults.how = undefined
    expect(await sessionOrganization(alice)).toBe(ACME)
  })

  it('switching the active organisation answers 503 and switches nothing', async () => {
    const { faults, wrap } = faulty(['getMembership', 'getOrganization'])
    const { bob } = await twoOrganizations('jwt', (adapter) => ({ availability, adapter: wrap(adapter) }))
    expect((await setActive(bob, { organizationId: ACME })).response.status).toBe(200)
    faults.how = how
    const { response } = await setActive(bob, { organizationId: GLOBEX })
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('7')
    faults.how = undefined
    expect(await sessionOrganization(bob)).toBe(ACME)
  })

  it('a role change answers 503 and changes no membership when the write fails', async () => {
    const { faults, wrap } = faulty(['changeMembership'])
    const { adapter, alice } = await twoOrganizations('jwt', (adapter) => ({ availability, adapter: wrap(adapter) }))
    expect((await setActive(alice, { organizationId: ACME })).response.status).toBe(200)
    faults.how = how
    const csrfToken = await alice.csrfToken()
    const response = await alice.send({ method: 'POST', path: '/organization/role', json: { csrfToken, organizationId: ACME, userId: USERS.bob.id, role: 'admin' } })
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('7')
    faults.how = undefined
    expect((await adapter.getMembership!(ACME, USERS.bob.id))?.role).toBe('member')
  })
})

describe('organisations: what an outage writes to the log', () => {
  it('logs an AdapterError with the outage code, not the driver message with its connection details', async () => {
    const { faults, wrap } = faulty(['getMembership'])
    const { config, alice } = await twoOrganizations('jwt', (adapter) => ({ availability: { adapterTimeout: 150 }, adapter: wrap(adapter) }))
    expect((await setActive(alice, { organizationId: ACME })).response.status).toBe(200)
    faults.how = 'throws'
    expect((await alice.session()).response.status).toBe(503)
    const logged = JSON.stringify(config.logger.error.mock.calls.map((call) => call.map((part) => (part instanceof Error ? { name: part.name, message: part.message, cause: (part as { cause?: unknown }).cause } : part))))
    // As Auth.js logs an adapter failure, with the outage's code, never the driver's message.
    expect(logged).toContain('"name":"AdapterError"')
    expect(logged).toContain('"code":"ECONNREFUSED"')
    expect(logged).not.toContain('hunter2')
    expect(logged).not.toContain('5432')
  })
})
