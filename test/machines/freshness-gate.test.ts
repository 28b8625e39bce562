/**
 * The freshness gate, checked on the charts and on the routing table: no built-in sensitive action
 * reaches its effect without it. The enrolment chart carries its gate as a state (the graph check
 * proves every path passes it); the other sensitive actions are handlers or shared charts whose
 * routes carry the `stepUp` flag, which dispatch applies before the route runs. Each check is
 * shown to fail on a chart or a table edited to skip the gate.
 */
import { describe, expect, it } from 'vitest'
import { createMachine, type AnyStateMachine } from 'xstate'
import { routesOf, type Route } from '../../core/http/routes.js'
import type { RequestContext } from '../../core/http/context.js'
import { SENSITIVE_ACTIONS } from '../../core/flows/reauthenticate/policy.js'
import { freshnessGateViolations, reauthenticationViolations } from '../../machines/checks.js'
import { reauthenticateMachine } from '../../machines/reauthenticate.machine.js'
import { totpEnrolmentMachine } from '../../machines/totp-enrolment.machine.js'
import { builtInMachines } from '../../visualizations/flows.js'
import { everyFlow } from '../../core/flows/catalogue.js'
import { apiKeys } from '../../core/api-keys.js'
import { organizations } from '../../core/organizations.js'
import { deviceAuthorization } from '../../core/device-authorization.js'

/** Every route authchart ships: the built-in flows', the optional features' and the feature modules'. */
const routes = routesOf(everyFlow, [...organizations().routes, ...apiKeys().routes, ...deviceAuthorization({ clients: [{ clientId: 'cli', name: 'CLI' }] }).routes])

/** `machine` with one state's transitions replaced. */
function edited(machine: AnyStateMachine, state: string, on: Record<string, unknown>): AnyStateMachine {
  const { config } = machine
  const states = config.states as Record<string, Record<string, unknown>>
  return createMachine({ ...config, states: { ...states, [state]: { ...states[state], on: { ...(states[state]!.on as object), ...on } } } } as never)
}

describe('the freshness gate on the graph', () => {
  it.each(builtInMachines.map((m) => [m.id, m] as const))('no path of %s reaches a sensitive state around it', (_id, machine) => {
    expect(freshnessGateViolations(machine)).toEqual([])
    expect(reauthenticationViolations(machine)).toEqual([])
  })

  it('finds the sensitive states of the enrolment behind its gate', () => {
    const sensitive = Object.entries(totpEnrolmentMachine.config.states!)
      .filter(([, node]) => ([] as string[]).concat((node as { tags?: string | string[] }).tags ?? []).includes('sensitive'))
      .map(([key]) => key)
    expect(sensitive).toEqual(['creatingSecret', 'confirmingCode'])
  })

  it('fails for an enrolment chart edited to skip the gate', () => {
    const skipping = edited(totpEnrolmentMachine, 'idle', { 'enrolment.start': { target: 'creatingSecret' } })
    expect(freshnessGateViolations(skipping)).toEqual([
      'totp-enrolment: a path reaches "creatingSecret" without the freshness gate',
      'totp-enrolment: a path reaches "confirmingCode" without the freshness gate',
    ])
  })

  it("fails for a gate whose stale answer leads on to the enrolment's effects", () => {
    const leaking = edited(totpEnrolmentMachine, 'checkingFreshness', { 'checkFreshness.failed': { target: 'creatingSecret' } })
    expect(freshnessGateViolations(leaking)).toContain('totp-enrolment: a stale session reaches "creatingSecret" from the gate')
  })

  it('fails for a chart with sensitive states and no gate at all', () => {
    const { config } = totpEnrolmentMachine
    const states = { ...(config.states as Record<string, Record<string, unknown>>) }
    delete states.checkingFreshness
    states.idle = { ...states.idle, on: { 'enrolment.start': { target: 'creatingSecret' } } }
    expect(freshnessGateViolations(createMachine({ ...config, states } as never))).toEqual([
      'totp-enrolment: has sensitive states but no freshness gate',
    ])
  })

  it('fails for a re-authentication chart that records a proof nobody gave', () => {
    const forged = edited(reauthenticateMachine, 'awaitingProof', { 'reauth.code': { target: 'markingVerified' } })
    expect(reauthenticationViolations(forged)).toEqual(['reauthenticate: a path reaches "markingVerified" without a proven factor'])
  })
})

/** A request context as the route's `stepUp` reads it. */
const requestOf = (method: 'GET' | 'POST', input: Record<string, unknown>, segment?: string) =>
  ({ request: { method, providerId: segment, query: method === 'GET' ? input : {}, body: method === 'POST' ? input : undefined } }) as unknown as RequestContext

const routeOf = (method: string, action: string, provider = 'none'): Route =>
  routes.find((r) => r.method === method && r.action === action && r.provider === provider)!

/** Each built-in sensitive action: the request that performs it, and where its gate is. */
const GATED: readonly {
  action: string
  method: 'GET' | 'POST'
  route: string
  provider?: string
  /** The path segment after the action (`/organization/<segment>`). */
  segment?: string
  input: Record<string, unknown>
  chart?: AnyStateMachine
}[] = [
  { action: 'add-passkey', method: 'GET', route: 'webauthn-options', provider: 'webauthn', input: { action: 'register' } },
  { action: 'add-passkey', method: 'POST', route: 'webauthn-options', provider: 'webauthn', input: { action: 'register' } },
  { action: 'revoke-sessions', method: 'POST', route: 'sessions', input: { revoke: 'others' } },
  { action: 'enrol-second-factor', method: 'POST', route: 'two-factor', input: {}, chart: totpEnrolmentMachine },
  { action: 'remove-second-factor', method: 'POST', route: 'two-factor', input: { action: 'disable' } },
  // New backup codes are a new way past the second factor: gated as its enrolment.
  { action: 'enrol-second-factor', method: 'POST', route: 'two-factor', input: { action: 'regenerate-backup-codes' } },
  // Signed in, an OAuth or OpenID Connect sign-in links the provider's account to the user.
  { action: 'link-account', method: 'POST', route: 'signin', provider: 'oauth', input: {} },
  { action: 'link-account', method: 'POST', route: 'signin', provider: 'oidc', input: {} },
  // Signed in, a password settings form changes, sets or removes the password.
  { action: 'change-password', method: 'POST', route: 'signin', provider: 'password', input: { intent: 'change' } },
  // Every change of a signed-in user's API keys: a key is a way in that outlives the session.
  { action: 'manage-api-keys', method: 'POST', route: 'api-keys', input: { action: 'create' } },
  { action: 'manage-api-keys', method: 'POST', route: 'api-keys', input: { action: 'revoke' } },
  { action: 'manage-api-keys', method: 'POST', route: 'api-keys', input: { action: 'rotate' } },
  // A device approved gets a session of the user's: as much a way in as a new sign-in.
  { action: 'approve-device', method: 'POST', route: 'device', input: { action: 'approve', user_code: 'BCDF-GHJK' } },
  // Deleting an organisation and handing it over cannot be undone by its owner.
  { action: 'manage-organization', method: 'POST', route: 'organization', segment: 'delete', input: {} },
  { action: 'manage-organization', method: 'POST', route: 'organization', segment: 'transfer', input: { userId: 'u-bob' } },
]

describe('the freshness gate on the routing table', () => {
  it('knows every built-in sensitive action', () => {
    expect([...new Set(GATED.map((g) => g.action))].sort()).toEqual([...SENSITIVE_ACTIONS].sort())
  })

  it.each(GATED.map((g) => [`${g.method} ${g.route}`, g] as const))('gates %s', (_name, gated) => {
    const route = routeOf(gated.method, gated.route, gated.provider)
    if (gated.chart) {
      // The route's flow is the chart with the gate in it.
      expect(freshnessGateViolations(gated.chart)).toEqual([])
      expect((route.serve as { flow: { machine: AnyStateMachine } }).flow.machine).toBe(gated.chart)
    } else {
      expect(route.stepUp?.(requestOf(gated.method, gated.input, gated.segment))).toBe(gated.action)
    }
  })

  it('lets the same routes through ungated when they are not the sensitive action', () => {
    expect(routeOf('GET', 'webauthn-options', 'webauthn').stepUp!(requestOf('GET', { action: 'authenticate' }))).toBeUndefined()
    // The code that verifies a passkey sign-up's address, not a registration.
    expect(routeOf('POST', 'webauthn-options', 'webauthn').stepUp!(requestOf('POST', { code: '123456' }))).toBeUndefined()
    // Denying a device signs nobody in.
    expect(routeOf('POST', 'device').stepUp!(requestOf('POST', { action: 'deny' }))).toBeUndefined()
    for (const segment of ['create', 'update', 'role', 'suspend', 'remove', 'leave', 'active', 'invite']) {
      expect(routeOf('POST', 'organization').stepUp!(requestOf('POST', {}, segment))).toBeUndefined()
    }
  })

  it('fails for a table edited to drop the flag from a gated route', () => {
    const route = routeOf('POST', 'sessions')
    const { stepUp: _dropped, ...withoutGate } = route
    const check = (r: Route) => r.stepUp?.(requestOf('POST', { revoke: 'all' })) === 'revoke-sessions'
    expect(check(route)).toBe(true)
    expect(check(withoutGate as Route)).toBe(false)
  })
})
