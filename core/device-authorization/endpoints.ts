/**
 * The device's endpoints of the device authorization grant (RFC 8628), answered as RFC 6749 JSON:
 *
 * - `POST {basePath}/device_authorization` (form: `client_id`, optional `scope`): the device
 *   code, the user code, where to enter it, their lifetime and the polling interval;
 * - `POST {basePath}/oauth/token` with `grant_type=urn:ietf:params:oauth:grant-type:device_code`,
 *   `device_code` and `client_id`: `authorization_pending`, `slow_down`, `access_denied`,
 *   `expired_token`, `invalid_grant`, or once, after the approval, the credential.
 *
 * The token endpoint is shared with service accounts: another grant type is left to them when
 * they are configured. A store or adapter that fails answers 503 with `Retry-After`, never a
 * credential.
 *
 * @module
 */
import { DEVICE_AUTHORIZATION } from '../../machines/device-authorization.logic.js'
import type { RequestContext, ResolvedConfig } from '../config/types.js'
import { assertConfig } from '../config/resolve-config.js'
import { advanceNow } from '../engine/advance.js'
import { UntrustedHost } from '../errors.js'
import { outageOf } from '../outage.js'
import { clientAddressOf } from '../http/request.js'
import { oauthFormOf } from '../oauth/form.js'
import { notifyRun, notifyStandalone, observedRunOptions } from '../observe/notify.js'
import type { LifecycleChange } from '../observe/types.js'
import { readForSignedInUser } from '../server.js'
import type { AuthConfig } from '../types.js'
import { codeKey, isDeviceCodeShape } from './codes.js'
import { codesIssuedFor, deviceAuthorizationFlow, tokenIssuedFor } from './flow.js'

/** The device code grant's `grant_type` (RFC 8628). */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' } as const
/** The largest body read: a device's form is a few hundred bytes. */
const MAX_BODY = 8 * 1024
const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/

function json(body: unknown, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...extra } })
}

const oauthError = (error: string, status = 400) => json({ error }, status)

const unavailable = (retryAfter: number) => json({ error: 'temporarily_unavailable' }, 503, { 'retry-after': String(retryAfter) })

/** Tells the audit trail (if configured) of a device request's change; never a code. */
async function recordChange(config: ResolvedConfig, request: Request, kind: LifecycleChange, userId?: string): Promise<void> {
  if (config.observers.length === 0) return
  const source = { header: (name: string) => request.headers.get(name), clientAddress: clientAddressOf(request) }
  await notifyStandalone(config, source, kind, userId === undefined ? {} : { userId })
}

type DeviceEvent = { type: 'device.request'; clientId: string; scope: string | null } | { type: 'device.poll'; clientId: string; codeKey: string }

/** Runs the chart for `event` in `ctx` and answers as the final state says, adding what the request issued. */
async function answerRun(ctx: RequestContext, event: DeviceEvent): Promise<{ response: Response; state: string }> {
  const run = await advanceNow(deviceAuthorizationFlow, ctx, { ...event, at: ctx.at }, observedRunOptions(ctx))
  notifyRun(ctx, DEVICE_AUTHORIZATION, run)
  const outcome = run.outcome
  const state = String(run.snapshot.value)
  if (outcome.type !== 'json') throw new Error(`${DEVICE_AUTHORIZATION}: unexpected outcome ${outcome.type}`)
  const status = outcome.status ?? 200
  if (status === 503) return { response: unavailable(ctx.config.availability.retryAfter), state }
  let body = outcome.body as Record<string, unknown>
  const codes = codesIssuedFor(ctx)
  if (state === 'issued' && codes) {
    const verification = `${ctx.authUrl}/device`
    body = {
      device_code: codes.deviceCode,
      user_code: codes.userCode,
      verification_uri: verification,
      verification_uri_complete: `${verification}?${new URLSearchParams({ user_code: codes.userCode })}`,
      ...body,
    }
  }
  const token = tokenIssuedFor(ctx)
  if (state === 'redeemed' && token !== undefined) body = { access_token: token, ...body }
  return { response: json(body, status), state }
}

/** `ctx` for the device's request (no cookie: a device has none), then `answer` in it. */
async function inRequestContext(request: Request, config: AuthConfig, answer: (ctx: RequestContext) => Promise<Response>): Promise<Response> {
  const origin = new URL(request.url).origin
  let response: Response | undefined
  let failure: unknown
  await readForSignedInUser({ origin, cookie: null, headers: request.headers, clientAddress: clientAddressOf(request) }, config, async (ctx) => {
    try {
      response = await answer(ctx)
    } catch (error) {
      failure = error
    }
  })
  if (failure !== undefined || response === undefined) throw failure ?? new Error('the device endpoint answered nothing')
  return response
}

/** `POST {basePath}/device_authorization`. */
async function deviceAuthorizationEndpoint(resolved: ResolvedConfig, request: Request, config: AuthConfig): Promise<Response> {
  if (request.method !== 'POST') return json({ error: 'invalid_request' }, 405, { allow: 'POST' })
  const form = await oauthFormOf(request, MAX_BODY)
  const clientId = form?.get('client_id')
  if (!form || clientId === undefined) return oauthError('invalid_request')
  if (!CLIENT_ID.test(clientId)) return oauthError('invalid_client')
  const scope = form.get('scope') ?? null
  let issued = false
  const response = await inRequestContext(request, config, async (ctx) => {
    const answered = await answerRun(ctx, { type: 'device.request', clientId, scope })
    issued = answered.state === 'issued'
    return answered.response
  })
  if (issued) await recordChange(resolved, request, 'device-authorization-requested')
  return response
}

/** The device code grant at `POST {basePath}/oauth/token`; `undefined` for another grant type when service accounts answer those. */
async function tokenEndpoint(resolved: ResolvedConfig, request: Request, config: AuthConfig): Promise<Response | undefined> {
  const others = resolved.serviceAccounts !== undefined
  if (request.method !== 'POST') return others ? undefined : json({ error: 'invalid_request' }, 405, { allow: 'POST' })
  // Read from a copy: the body stays whole for the service accounts' endpoint.
  const form = await oauthFormOf(others ? request.clone() : request, MAX_BODY)
  const grantType = form?.get('grant_type')
  if (grantType !== DEVICE_CODE_GRANT) {
    if (others) return undefined
    return oauthError(form && grantType !== undefined ? 'unsupported_grant_type' : 'invalid_request')
  }
  const clientId = form!.get('client_id')
  const deviceCode = form!.get('device_code')
  if (clientId === undefined || deviceCode === undefined) return oauthError('invalid_request')
  if (!CLIENT_ID.test(clientId)) return oauthError('invalid_client')
  if (!resolved.deviceAuthorization!.options.clients.has(clientId)) return oauthError('invalid_client')
  if (!isDeviceCodeShape(deviceCode)) return oauthError('invalid_grant')
  const key = await codeKey(resolved.secrets[0], 'device', deviceCode)
  let redeemed = false
  const response = await inRequestContext(request, config, async (ctx) => {
    const answered = await answerRun(ctx, { type: 'device.poll', clientId, codeKey: key })
    redeemed = answered.state === 'redeemed'
    return answered.response
  })
  if (redeemed) await recordChange(resolved, request, 'device-authorization-redeemed')
  return response
}

/**
 * Answers the device's endpoints of `deviceAuthorization()` under the configuration's base path;
 * `undefined` for any other path (and, when service accounts are configured, for a token request
 * of another grant type: theirs to answer).
 *
 * @throws {ConfigError} when `config` does not name `deviceAuthorization()`.
 */
export async function deviceEndpoints(request: Request, config: AuthConfig): Promise<Response | undefined> {
  const resolved = assertConfig(config)
  if (!resolved.deviceAuthorization) throw new TypeError('deviceEndpoints needs a configuration with deviceAuthorization()')
  const base = resolved.basePath === '/' ? '' : resolved.basePath.replace(/\/+$/, '')
  const path = new URL(request.url).pathname.replace(/\/+$/, '')
  try {
    if (path === `${base}/device_authorization`) return await deviceAuthorizationEndpoint(resolved, request, config)
    if (path === `${base}/oauth/token`) return await tokenEndpoint(resolved, request, config)
  } catch (error) {
    // A Host the configuration does not trust is the request's fault: it names no verification URI of ours.
    if (error instanceof UntrustedHost) {
      resolved.logger.error(error)
      return oauthError('invalid_request')
    }
    // Fail closed: whatever failed (the store, the adapter, a deadline), the device is told to come back, and is given nothing.
    const outage = outageOf(error)
    if (!outage) resolved.logger.error(error instanceof Error ? error : new Error(String(error)))
    return unavailable(outage?.retryAfter ?? resolved.availability.retryAfter)
  }
  return undefined
}
