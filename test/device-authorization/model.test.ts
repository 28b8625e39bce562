/**
 * Every transition of the device authorization chart, driven through `Auth`: a device (a script
 * posting forms) and Alice signed in. Each effect's success and each of its failures is arranged in
 * the world: an unknown client, a malformed scope, a request already approved, denied, expired or
 * polled a moment ago, a code redeemed already or settled by a concurrent answer, a wrong user
 * code, a spent limit, and a store that throws on the call the effect makes.
 */
import { describe, expect, it } from 'vitest'
import { deviceAuthorizationMachine } from '../../machines/device-authorization.machine.js'
import { ISSUES_CREDENTIAL_TAG } from '../../machines/device-authorization.logic.js'
import { codeKey } from '../../core/device-authorization/codes.js'
import { deviceKeys } from '../../core/device-authorization/flow.js'
import type { StoredDeviceRequest } from '../../core/device-authorization/types.js'
import type { AuthStore } from '../../core/store/types.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, SECRET } from '../fixtures/http.js'
import { describeModel } from '../machines/harness.js'
import { answer, deviceWorld, poll, requestCodes } from './fixture.js'

type PollState = 'pending' | 'slowDown' | 'approved' | 'denied' | 'expired' | 'unknown'
type Broken = 'none' | 'put' | 'get' | 'redeemClaim' | 'settleClaim' | 'consume'

interface World {
  client: 'acme-cli' | 'evil-cli'
  scope: string | null
  request: PollState
  redeemed: boolean
  userCode: 'right' | 'wrong'
  limited: boolean
  settlementLost: boolean
  broken: Broken
}

/** The shared store as the world wants it. */
function storeOf(world: World) {
  return (inner: AuthStore): AuthStore => ({
    ...inner,
    put: (key, value, ttl) => (world.broken === 'put' ? Promise.reject(new TypeError('the store refuses writes')) : inner.put(key, value, ttl)),
    get: (key) => (world.broken === 'get' && key.startsWith('device-authorization:request:') ? Promise.reject(new TypeError('the store refuses reads')) : inner.get(key)),
    claim: (key, ttl) => {
      if (key.startsWith('device-authorization:redeem:') && world.broken === 'redeemClaim') return Promise.reject(new TypeError('the store refuses claims'))
      if (key.startsWith('device-authorization:settle:')) {
        if (world.broken === 'settleClaim') return Promise.reject(new TypeError('the store refuses claims'))
        if (world.settlementLost) return Promise.resolve(false)
      }
      return inner.claim(key, ttl)
    },
    consume: (key, points, window) => {
      if (world.broken === 'consume') return Promise.reject(new TypeError('the limiter is misconfigured'))
      if (world.limited) return Promise.resolve({ allowed: false, count: points + 1, retryAfter: 30 })
      return inner.consume(key, points, window)
    },
  })
}

/** A world whose store breaks only once the world says so: setting it up never fails. */
async function arranged(world: World) {
  const live: World = { ...world, broken: 'none', limited: false, settlementLost: false }
  const built = await deviceWorld({ store: storeOf(live) })
  const measure = () => Object.assign(live, world)
  return { ...built, measure }
}

/** `client`'s cookies on a client of `config`. */
function sameBrowser(client: Client, config: AuthConfig): Client {
  const copy = new Client(config)
  for (const [name, value] of client.jar.cookies) copy.jar.cookies.set(name, value)
  return copy
}

const asResponse = (answered: { status: number; headers: Headers; body: unknown }) =>
  new Response(JSON.stringify(answered.body), { status: answered.status, headers: answered.headers })
const htmlResponse = (answered: { response: Response; html: string }) =>
  new Response(answered.html, { status: answered.response.status, headers: answered.response.headers })

async function answerAs(world: World, action: 'approve' | 'deny', inspect: AuthConfig['inspect']) {
  const { config, alice, measure } = await arranged(world)
  const { issued } = await requestCodes(config)
  measure()
  const code = world.userCode === 'right' ? issued.user_code : 'BCDF-GHJK'
  return htmlResponse(await answer(sameBrowser(alice, { ...config, inspect }), action, code))
}

const oauthError = (error: string, status = 400) => async (response: Response) => {
  expect(response.status).toBe(status)
  expect(((await response.json()) as { error: string }).error).toBe(error)
}

describeModel<World>('device authorization grant', {
  machine: deviceAuthorizationMachine,
  samples: [
    { type: 'device.request', at: 0, clientId: 'acme-cli', scope: null },
    { type: 'device.poll', at: 0, clientId: 'acme-cli', codeKey: 'k' },
    { type: 'device.approve', at: 0, userId: 'u', codeKey: 'k' },
    { type: 'device.deny', at: 0, userId: 'u', codeKey: 'k' },
    { type: 'issueCodes.done', at: 0, output: { expiresIn: 600, interval: 5 } },
    { type: 'issueCodes.failed', at: 0, reason: 'invalidClient' },
    { type: 'issueCodes.failed', at: 0, reason: 'invalidScope' },
    { type: 'issueCodes.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    ...(['pending', 'slowDown', 'approved', 'denied', 'expired'] as const).map((status) => ({
      type: 'checkPoll.done',
      at: 0,
      output: { deviceKey: 'd', status, interval: status === 'slowDown' ? 10 : 5 },
    })),
    { type: 'checkPoll.failed', at: 0, reason: 'unknown' },
    { type: 'checkPoll.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'redeemDeviceCode.done', at: 0, output: { expiresIn: 2_592_000 } },
    { type: 'redeemDeviceCode.failed', at: 0, reason: 'spent' },
    { type: 'redeemDeviceCode.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'checkUserCode.done', at: 0, output: { deviceKey: 'd' } },
    { type: 'checkUserCode.failed', at: 0, reason: 'unknown', error: 'AccessDenied', code: 'InvalidCode' },
    { type: 'checkUserCode.failed', at: 0, reason: 'limited', error: 'AccessDenied', code: 'TooManyAttempts', retryAfter: 30 },
    { type: 'checkUserCode.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'approveDevice.done', at: 0, output: null },
    { type: 'approveDevice.failed', at: 0, reason: 'settled', error: 'AccessDenied', code: 'InvalidCode' },
    { type: 'approveDevice.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    { type: 'denyDevice.done', at: 0, output: null },
    { type: 'denyDevice.failed', at: 0, reason: 'settled', error: 'AccessDenied', code: 'InvalidCode' },
    { type: 'denyDevice.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
  ],
  onlySamples: true,
  label: (event) => (event.type === 'checkPoll.done' ? `checkPoll.done (${event.output.status})` : undefined),
  world: () => ({ client: 'acme-cli', scope: null, request: 'pending', redeemed: false, userCode: 'right', limited: false, settlementLost: false, broken: 'none' }),
  arrange: {
    'issueCodes.done': () => {},
    'issueCodes.failed': (world, event) => {
      if (event.reason === 'invalidClient') world.client = 'evil-cli'
      if (event.reason === 'invalidScope') world.scope = 'bad"scope'
      if (event.reason === 'threw') world.broken = 'put'
    },
    'checkPoll.done': (world, event) => {
      world.request = event.output.status
    },
    'checkPoll.failed': (world, event) => {
      if (event.reason === 'unknown') world.request = 'unknown'
      else world.broken = 'get'
    },
    'redeemDeviceCode.done': () => {},
    'redeemDeviceCode.failed': (world, event) => {
      if (event.reason === 'spent') world.redeemed = true
      else world.broken = 'redeemClaim'
    },
    'checkUserCode.done': () => {},
    'checkUserCode.failed': (world, event) => {
      if (event.reason === 'unknown') world.userCode = 'wrong'
      if (event.reason === 'limited') world.limited = true
      if (event.reason === 'threw') world.broken = 'consume'
    },
    'approveDevice.done': () => {},
    'approveDevice.failed': (world, event) => {
      if (event.reason === 'settled') world.settlementLost = true
      else world.broken = 'settleClaim'
    },
    'denyDevice.done': () => {},
    'denyDevice.failed': (world, event) => {
      if (event.reason === 'settled') world.settlementLost = true
      else world.broken = 'settleClaim'
    },
  },
  send: {
    'device.request': async (world, _event, inspect) => {
      const { config, measure } = await arranged(world)
      measure()
      return asResponse(await requestCodes({ ...config, inspect }, world.client, world.scope ?? undefined))
    },
    'device.poll': async (world, _event, inspect) => {
      const { config, alice, store, measure } = await arranged(world)
      const { issued } = await requestCodes(config)
      if (world.request === 'approved') await answer(alice, 'approve', issued.user_code)
      if (world.request === 'denied') await answer(alice, 'deny', issued.user_code)
      if (world.request === 'slowDown') await poll(config, issued.device_code)
      if (world.request === 'expired') {
        const key = deviceKeys(await codeKey(SECRET, 'device', issued.device_code)).request
        const stored = JSON.parse((await store.get(key))!) as StoredDeviceRequest
        await store.put(key, JSON.stringify({ ...stored, expiresAt: stored.createdAt - 1 }), 600)
      }
      if (world.redeemed) await poll(config, issued.device_code)
      measure()
      const code = world.request === 'unknown' ? 'Z'.repeat(43) : issued.device_code
      return asResponse(await poll({ ...config, inspect }, code))
    },
    'device.approve': (world, _event, inspect) => answerAs(world, 'approve', inspect),
    'device.deny': (world, _event, inspect) => answerAs(world, 'deny', inspect),
  },
  expect: {
    issued: async (response) => {
      expect(response.status).toBe(200)
      const body = (await response.json()) as Record<string, unknown>
      expect(body).toMatchObject({ expires_in: 600, interval: 5, verification_uri: 'https://authchart.test/auth/device' })
      expect(body.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    },
    invalidClient: oauthError('invalid_client'),
    invalidScope: oauthError('invalid_scope'),
    authorizationPending: oauthError('authorization_pending'),
    slowDown: async (response) => {
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: 'slow_down', interval: 10 })
    },
    accessDenied: oauthError('access_denied'),
    expiredToken: oauthError('expired_token'),
    invalidGrant: oauthError('invalid_grant'),
    redeemed: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String), expires_in: 2_592_000 })
    },
    approved: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.text()).toContain('Device signed in')
    },
    denied: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.text()).toContain('Request denied')
    },
    refused: async (response) => {
      expect(response.status).toBe(400)
      expect(await response.text()).toContain('not valid, or it has expired')
    },
    limited: (response) => {
      expect(response.status).toBe(429)
      expect(response.headers.get('retry-after')).toBe('30')
    },
    failed: (response) => {
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).not.toBeNull()
    },
  },
})

describe('the device authorization chart', () => {
  it('gives the device its credential only after a poll that found the request approved', () => {
    const into: string[] = []
    const walk = (node: typeof deviceAuthorizationMachine.root) => {
      for (const [type, transitions] of node.transitions) {
        for (const transition of transitions) {
          for (const target of transition.target ?? []) {
            if (target.tags.includes(ISSUES_CREDENTIAL_TAG)) into.push(`${node.id} ${type} ${String((transition.guard as { type?: string } | undefined)?.type ?? transition.guard)}`)
          }
        }
      }
      for (const child of Object.values(node.states)) walk(child as typeof node)
    }
    walk(deviceAuthorizationMachine.root)
    expect(into).toEqual(['device-authorization.polling.checkingPoll checkPoll.done isApproved'])
  })
})
