/**
 * The fuzz driver's verdicts on fixed plans: counterexamples a seed once produced, replayed without
 * the seed, and the refusals they sit next to. A plan here names its route by key, not by index, so
 * a change to the routing table does not move it to another route.
 */
import { describe, expect, it } from 'vitest'
import { Driver, routeKey } from './fuzz/drive.js'
import type { Plan } from './fuzz/plans.js'
import { useOutsideParties } from './fuzz/run.js'
import { World } from './fuzz/world.js'
import { Auth } from '../../core/index.js'
import type { Adapter } from '../../core/adapters.js'
import type { AuthConfig } from '../../core/types.js'

const parties = useOutsideParties()

/** A plan for the route `key` of the world's table, signed in with credentials first. */
function planFor(driver: Driver, key: string, plan: Omit<Plan, 'route'>): Plan {
  const route = driver.table.findIndex((r) => routeKey(r) === key)
  if (route === -1) throw new Error(`no route ${key} in the table`)
  return { route, ...plan }
}

describe('an answer tamper on a parameter the provider never sent', () => {
  // GitHub's default checks are PKCE only: its authorization request and its answer carry no
  // state. A query noise `state=token` adds one; `drop-state` then removes that noise again, so the
  // request is the provider's own answer with the intact envelope: a legitimate sign-in. The
  // oracle used to count the answer as tampered and call the new session a forged renewal
  // (FUZZ_SEED=2044842166, database sessions, before the routing table changed).
  const counterexample: Omit<Plan, 'route'> = {
    provider: 7,
    csrf: true,
    session: 'credentials',
    flow: 'visited',
    proof: true,
    tampers: [
      { kind: 'noise', noise: { kind: 'query', key: 'state', value: 'token' } },
      { kind: 'answer', how: 'drop-state', n: 8 },
    ],
  }

  it.each(['database', 'jwt'] as const)('leaves the answer genuine, and its sign-in legitimate (%s sessions)', async (strategy) => {
    const world = new World(parties(), { strategy, customPages: true, basePath: '/api/auth', debug: true })
    const driver = new Driver(world)
    world.log.install()
    try {
      await driver.run(planFor(driver, 'GET callback oauth', counterexample))
    } finally {
      world.log.restore()
    }
    expect(driver.reach.signedIn.get('GET callback oauth')).toBe(1)
  })
})

describe('a provider answer whose state was dropped', () => {
  const dropState: Omit<Plan, 'route'> = {
    provider: 0,
    csrf: true,
    session: 'none',
    flow: 'visited',
    proof: true,
    tampers: [{ kind: 'answer', how: 'drop-state', n: 0 }],
  }

  it('signs no one in through a provider that checks the state', async () => {
    const world = new World(parties(), { strategy: 'database' })
    const driver = new Driver(world)
    world.log.install()
    try {
      await driver.run(planFor(driver, 'GET callback oidc', dropState))
    } finally {
      world.log.restore()
    }
    expect(driver.reach.sent.get('GET callback oidc')).toBe(1)
    expect(driver.reach.signedIn.get('GET callback oidc')).toBeUndefined()
    expect(world.store.sessions.size).toBe(0)
  })

  it('is still a violation when the handler signs it in anyway', async () => {
    // A handler with the defect the oracle guards against: every callback it answers without a
    // session gets one, whatever the answer carried.
    const signsInEveryCallback = async (request: Request, config: AuthConfig): Promise<Response> => {
      const response = await Auth(request, config)
      if (!new URL(request.url).pathname.includes('/callback/') || response.headers.getSetCookie().some((c) => c.includes('session-token='))) {
        return response
      }
      const adapter = config.adapter as Adapter
      const user = await adapter.createUser!({ id: crypto.randomUUID(), email: 'mallory@example.com', emailVerified: null })
      const sessionToken = crypto.randomUUID()
      await adapter.createSession!({ sessionToken, userId: user.id, expires: new Date(Date.now() + 60_000) })
      const headers = new Headers(response.headers)
      headers.append('set-cookie', `${world.cookies.sessionToken.name}=${sessionToken}; Path=/; HttpOnly; Secure; SameSite=Lax`)
      return new Response(response.body, { status: response.status, headers })
    }
    const world: World = new World(parties(), { strategy: 'database', handler: signsInEveryCallback })
    const driver = new Driver(world)
    world.log.install()
    try {
      await expect(driver.run(planFor(driver, 'GET callback oidc', dropState))).rejects.toThrow(
        /a session cookie was issued to a request that may not sign in/,
      )
    } finally {
      world.log.restore()
    }
  })
})
