/**
 * Fuzzing that reaches the flows. Requests are generated from the routing table itself (every
 * (method, action, provider type) entry, with a configured provider of that type), so a route
 * added later is fuzzed without editing this file. A share of them carry what a legitimate client
 * would bring (a valid CSRF pair, a live session, an OAuth flow sealed by a real sign-in start and
 * taken through a real OpenID Provider, the right password), and most of those are then tampered
 * with. The engine's inspection hook (`config.inspect`) proves how many requests reached each flow.
 *
 * Properties, for every request (see `fuzz/drive.ts` for the precise rules): no exception escapes
 * `Auth`; no 5xx but the Configuration error page; no session cookie (and no session row) unless
 * the request may legitimately sign in or renews its own intact session; no flow reached without
 * a valid CSRF pair on a CSRF route; no broken, replayed or foreign envelope resumes a flow; every
 * redirect stays on our origin or goes to a provider endpoint, judged as a browser parses it; an
 * authorization request never takes its `redirect_uri` or `response_type` from the request; no
 * stack trace, secret or unescaped markup in a body; no log line with a raw control character, a
 * forged line, or a secret.
 *
 * The seed is printed; `FUZZ_SEED=<seed> npx vitest run test/security/fuzz-flows.test.ts`
 * replays a run.
 */
import { describe, expect, it } from 'vitest'
import type { FlowBinding } from '../../core/http/routes.js'
import { Driver, routeKey } from './fuzz/drive.js'
import { planArb } from './fuzz/plans.js'
import { fuzz, useOutsideParties } from './fuzz/run.js'
import { World, type WorldOptions } from './fuzz/world.js'

/** Generated requests per world. */
const RUNS = 3400
/**
 * Each flow must be reached at least this often per run, each flow-serving route this often. The
 * seed changes every run: the rarest flow (TOTP enrolment, behind a signed-in session and a CSRF
 * pair) is reached 49 to 77 times in 3,400 requests, so the floor sits well below that spread.
 */
const MIN_PER_FLOW = 25
const MIN_PER_ROUTE = 10

const parties = useOutsideParties()

const worlds: [string, WorldOptions][] = [
  ['JWT sessions and the built-in pages', { strategy: 'jwt' }],
  ['database sessions, custom pages and /api/auth', { strategy: 'database', customPages: true, basePath: '/api/auth', debug: true }],
]

describe.each(worlds.map(([name, options], index) => [name, options, index] as const))(
  'fuzzing the flows with %s',
  (name, options, index) => {
    it(`answers ${RUNS} generated requests across the routing table without a violation, reaching every flow`, async () => {
      const world = new World(parties(), options)
      const driver = new Driver(world)
      await fuzz(world, `fuzz-flows (${name})`, index, RUNS, planArb(driver.table.length, driver.routesByFlow), (plan) => driver.run(plan))
      const { reach } = driver
      world.log.print(reach.report(`fuzz-flows (${name})`))

      expect(reach.total).toBe(RUNS)
      // Routes whose flow is chosen per request (a step names its flow in the path) are reached
      // only with a flow resting in a step; their reach is not required here.
      const flowRoutes = driver.table.filter(
        (r) => typeof r.serve !== 'function' && typeof (r.serve as FlowBinding<never>).flow !== 'function',
      )
      const flows = new Set(
        flowRoutes.map((r) => ((r.serve as FlowBinding<never>).flow as Exclude<FlowBinding<never>['flow'], Function>).chart.id),
      )
      for (const flow of flows) {
        expect(reach.flows.get(flow) ?? 0, `requests that reached flow ${flow}`).toBeGreaterThanOrEqual(MIN_PER_FLOW)
      }
      for (const route of flowRoutes) {
        expect(reach.reached.get(routeKey(route)) ?? 0, `requests that reached the flow of ${routeKey(route)}`).toBeGreaterThanOrEqual(
          MIN_PER_ROUTE,
        )
      }
      // The legitimate paths are really taken, so their tampered neighbours mean something.
      expect(reach.signedIn.get('POST callback credentials') ?? 0).toBeGreaterThan(0)
      expect((reach.signedIn.get('GET callback oidc') ?? 0) + (reach.signedIn.get('POST callback oidc') ?? 0)).toBeGreaterThan(0)
      expect((reach.signedIn.get('GET callback oauth') ?? 0) + (reach.signedIn.get('POST callback oauth') ?? 0)).toBeGreaterThan(0)
    }, 300_000)
  },
)
