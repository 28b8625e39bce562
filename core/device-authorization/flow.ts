/**
 * The device authorization chart's effects over the shared store (`machines/device-authorization.*`).
 * A device request is kept under the keyed hash of its device code; its settlement (approved or
 * denied), its redemption and each poll's interval are one-time claims beside it, so that two
 * instances sharing the store answer as one: a code is redeemed once however many polls race, and
 * a poll within the interval is seen by every instance.
 *
 * @module
 */
import { DEVICE_AUTHORIZATION, DeviceAuthorizationContext } from '../../machines/device-authorization.logic.js'
import type { deviceAuthorizationMachine } from '../../machines/device-authorization.machine.js'
import { deviceAuthorizationChart } from '../charts/device-authorization.js'
import type { FlowModule, RequestContext } from '../config/types.js'
import { defineCompiledFlow } from '../engine/compiled-flow.js'
import { effects, fail } from '../flows/effect.js'
import { currentSession } from '../session/current.js'
import { createSessionRow, issueJwtSession } from '../session/issue.js'
import { addressBucket, admitAttempt } from '../store/limits.js'
import { codeKey, newDeviceCode, newUserCode } from './codes.js'
import type { ResolvedDeviceAuthorizationOptions, StoredDeviceRequest } from './types.js'

/** How long past its expiry a request is kept, so that its device is told `expired_token` rather than `invalid_grant`. */
export const EXPIRED_GRACE = 600
/** Seconds a slow-down adds to the interval (RFC 8628). */
export const SLOW_DOWN_STEP = 5
/** The longest an interval grows to. */
const MAX_INTERVAL = 120
/** RFC 6749 scope-token, space-delimited, at most 1,024 characters. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/

/** The store keys of one device request, by the keyed hash of its device code. */
export const deviceKeys = (deviceKey: string) => ({
  request: `device-authorization:request:${deviceKey}`,
  interval: `device-authorization:interval:${deviceKey}`,
  poll: `device-authorization:poll:${deviceKey}`,
  settle: `device-authorization:settle:${deviceKey}`,
  redeem: `device-authorization:redeem:${deviceKey}`,
})
/** The store key of a user code (its keyed hash), naming the request's device key. */
export const userCodeStoreKey = (userKey: string) => `device-authorization:user:${userKey}`
const userCodeClaim = (userKey: string) => `device-authorization:user-claim:${userKey}`

/** The codes a request issued, kept with the request that issued them (never in the chart). */
const issuedCodes = new WeakMap<RequestContext, { deviceCode: string; userCode: string }>()
/** The credential a redemption issued, kept with the request (never in the chart). */
const issuedTokens = new WeakMap<RequestContext, string>()

/** The codes `ctx`'s request issued, if it issued any. */
export const codesIssuedFor = (ctx: RequestContext) => issuedCodes.get(ctx)
/** The credential `ctx`'s request redeemed, if it redeemed one. */
export const tokenIssuedFor = (ctx: RequestContext) => issuedTokens.get(ctx)

const optionsOf = (ctx: RequestContext): ResolvedDeviceAuthorizationOptions => ctx.config.deviceAuthorization!.options

/** The device request stored under `deviceKey`, or `null`. */
export async function storedRequest(ctx: RequestContext, deviceKey: string): Promise<StoredDeviceRequest | null> {
  const text = await ctx.config.store.get(deviceKeys(deviceKey).request)
  return text === null ? null : (JSON.parse(text) as StoredDeviceRequest)
}

/** Seconds the store keeps a request's keys from now: its lifetime left and the grace after it. */
const keptFor = (ctx: RequestContext, request: StoredDeviceRequest) => Math.max(1, request.expiresAt + EXPIRED_GRACE - ctx.at)

/**
 * Counts an attempt to enter a user code, per user and per address (IPv6 by its /64), in the
 * shared store; the retry time when a limit is reached.
 *
 * @throws {ServiceUnavailable} when the store cannot count.
 */
export async function admitUserCodeAttempt(ctx: RequestContext, userId: string): Promise<{ allowed: true } | { allowed: false; retryAfter: number }> {
  const { perUser, perAddress, window } = optionsOf(ctx).userCodeLimit
  const subjects = [{ kind: 'user', value: userId, limit: { points: perUser, window } }]
  if (ctx.clientAddress !== undefined) subjects.push({ kind: 'address', value: addressBucket(ctx.clientAddress), limit: { points: perAddress, window } })
  return admitAttempt(ctx.config.store, 'device-user-code', ctx.config.secrets[0], subjects as never, ctx.logger)
}

/** The pending, unexpired request a user code names, with its device key; `null` for any other code. */
export async function pendingRequestOf(ctx: RequestContext, userKey: string): Promise<{ deviceKey: string; request: StoredDeviceRequest } | null> {
  const deviceKey = await ctx.config.store.get(userCodeStoreKey(userKey))
  if (deviceKey === null) return null
  const request = await storedRequest(ctx, deviceKey)
  if (!request || request.status !== 'pending' || request.expiresAt <= ctx.at) return null
  return { deviceKey, request }
}

type DeviceMachine = typeof deviceAuthorizationMachine

const refused = (code: string) => fail('unknown', { error: 'AccessDenied', code })

/** Settles the request as `status` once; `false` when it was settled already (or is gone). */
async function settle(ctx: RequestContext, deviceKey: string, status: 'approved' | 'denied', userId: string): Promise<boolean> {
  const request = await storedRequest(ctx, deviceKey)
  if (!request || request.status !== 'pending' || request.expiresAt <= ctx.at) return false
  let approver = null
  if (status === 'approved') {
    const current = await currentSession(ctx)
    // The approver is the session authority's user, read again: never the request's word for it.
    // Read before the claim: a refusal here leaves the request to be answered by its user.
    if (!current || current.user.id !== userId) throw new Error('the approving session ended during the approval')
    approver = { id: current.user.id, email: current.user.email, name: current.user.name }
  }
  const keys = deviceKeys(deviceKey)
  if (!(await ctx.config.store.claim(keys.settle, keptFor(ctx, request)))) return false
  await ctx.config.store.put(keys.request, JSON.stringify({ ...request, status, approver } satisfies StoredDeviceRequest), keptFor(ctx, request))
  return true
}

const deviceEffects = effects<DeviceMachine, RequestContext>(deviceAuthorizationChart, {
  async issueCodes(context, ctx) {
    const options = optionsOf(ctx)
    if (!options.clients.has(context.clientId)) return fail('invalidClient')
    if (context.scope !== null && (context.scope.length > 1024 || !SCOPE.test(context.scope))) return fail('invalidScope')
    const { store, secrets } = ctx.config
    const deviceCode = newDeviceCode()
    const deviceKey = await codeKey(secrets[0], 'device', deviceCode)
    let userCode = ''
    let userKey = ''
    // A user code names one live request: a collision (one in 2^34 per live code) draws another.
    for (let attempt = 0; attempt < 4 && userKey === ''; attempt++) {
      const candidate = newUserCode()
      const key = await codeKey(secrets[0], 'user', candidate.replace('-', ''))
      if (await store.claim(userCodeClaim(key), options.expiresIn)) [userCode, userKey] = [candidate, key]
    }
    if (userKey === '') throw new Error('no free user code was found')
    const request: StoredDeviceRequest = {
      clientId: context.clientId,
      scope: context.scope,
      createdAt: ctx.at,
      expiresAt: ctx.at + options.expiresIn,
      address: ctx.clientAddress?.slice(0, 64) ?? null,
      userAgent: ctx.request.headers.get('user-agent')?.slice(0, 256) ?? null,
      status: 'pending',
      approver: null,
    }
    const keys = deviceKeys(deviceKey)
    await store.put(keys.request, JSON.stringify(request), keptFor(ctx, request))
    await store.put(keys.interval, String(options.interval), keptFor(ctx, request))
    await store.put(userCodeStoreKey(userKey), deviceKey, options.expiresIn)
    issuedCodes.set(ctx, { deviceCode, userCode })
    return { expiresIn: options.expiresIn, interval: options.interval }
  },

  async checkPoll(context, ctx) {
    const deviceKey = context.codeKey!
    const request = await storedRequest(ctx, deviceKey)
    // An unknown code and another client's are one answer: codes cannot be probed by client.
    if (!request || request.clientId !== context.clientId) return fail('unknown')
    const { store } = ctx.config
    const keys = deviceKeys(deviceKey)
    const interval = Number((await store.get(keys.interval)) ?? optionsOf(ctx).interval)
    if (request.expiresAt <= ctx.at) return { deviceKey, status: 'expired' as const, interval }
    if (request.status === 'denied') return { deviceKey, status: 'denied' as const, interval }
    if (request.status === 'approved') return { deviceKey, status: 'approved' as const, interval }
    // The poll holds a claim for the interval: a poll while it lives, on any instance, came too soon.
    if (await store.claim(keys.poll, interval)) return { deviceKey, status: 'pending' as const, interval }
    const slower = Math.min(MAX_INTERVAL, interval + SLOW_DOWN_STEP)
    await store.put(keys.interval, String(slower), keptFor(ctx, request))
    // The wait starts again from this poll, at the longer interval.
    await store.reset(keys.poll)
    await store.claim(keys.poll, slower)
    return { deviceKey, status: 'slowDown' as const, interval: slower }
  },

  async redeemDeviceCode(context, ctx) {
    const deviceKey = context.deviceKey!
    const request = await storedRequest(ctx, deviceKey)
    if (!request || request.status !== 'approved' || !request.approver) return fail('spent')
    // Compare-and-set: of any number of racing redemptions, on any instance, one wins the claim.
    if (!(await ctx.config.store.claim(deviceKeys(deviceKey).redeem, keptFor(ctx, request)))) {
      return fail('spent')
    }
    const { approver } = request
    let issued: { value: string | null; expires: number }
    if (ctx.config.session.strategy === 'database') {
      issued = await createSessionRow(ctx, approver.id)
    } else {
      issued = await issueJwtSession(ctx, {
        user: { id: approver.id, email: approver.email, name: approver.name },
        account: { provider: DEVICE_AUTHORIZATION, type: 'oauth', providerAccountId: approver.id, client_id: request.clientId },
        isNewUser: false,
      })
    }
    // A `jwt` callback that answered null issues no session: the device gets none either.
    if (issued.value === null) throw new Error('the jwt callback issued no session for the device')
    issuedTokens.set(ctx, issued.value)
    return { expiresIn: Math.max(0, issued.expires - ctx.at) }
  },

  async checkUserCode(context, ctx) {
    const admission = await admitUserCodeAttempt(ctx, context.userId)
    if (!admission.allowed) return fail('limited', { error: 'AccessDenied', code: 'TooManyAttempts', retryAfter: admission.retryAfter })
    const found = await pendingRequestOf(ctx, context.codeKey!)
    // Wrong, expired or answered already: one answer, naming no other request.
    if (!found) return refused('InvalidCode')
    return { deviceKey: found.deviceKey }
  },

  async approveDevice(context, ctx) {
    const settled = await settle(ctx, context.deviceKey!, 'approved', context.userId)
    if (!settled) return fail('settled', { error: 'AccessDenied', code: 'InvalidCode' })
    await ctx.config.store.reset(userCodeStoreKey(context.codeKey!))
    return null
  },

  async denyDevice(context, ctx) {
    const settled = await settle(ctx, context.deviceKey!, 'denied', context.userId)
    if (!settled) return fail('settled', { error: 'AccessDenied', code: 'InvalidCode' })
    await ctx.config.store.reset(userCodeStoreKey(context.codeKey!))
    return null
  },
})

/** The device authorization flow, as the engine runs it (its handlers are the feature's routes and endpoints). */
export const deviceAuthorizationFlow = defineCompiledFlow<DeviceMachine, RequestContext>({
  chart: deviceAuthorizationChart,
  context: DeviceAuthorizationContext,
  effects: deviceEffects,
  notation: () => import('../../machines/device-authorization.machine.js').then((module) => module.deviceAuthorizationMachine),
})

/**
 * The device authorization flow as a flow module, for the readers of every chart (the diagrams,
 * the test kit, the inspector): run by a configuration with `deviceAuthorization()`.
 */
export const deviceAuthorizationModule: FlowModule = {
  id: DEVICE_AUTHORIZATION,
  flow: deviceAuthorizationFlow as unknown as FlowModule['flow'],
  runs: (config) => config.deviceAuthorization !== undefined,
}
