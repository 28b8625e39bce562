/**
 * The device authorization grant (RFC 8628), brought in by its import:
 * `deviceAuthorization: deviceAuthorization({ clients })` from `authchart/device-authorization`.
 * A device that cannot show a browser (a CLI, a TV) asks for codes at
 * `POST {basePath}/device_authorization`, shows the user code and `verification_uri`, and polls
 * `POST {basePath}/oauth/token`; the signed-in user approves at `{basePath}/device`, and the
 * device's next poll gets a session of theirs as its bearer token, read with {@link deviceSession}.
 *
 * Without it the core links none of this.
 *
 * @example
 * ```ts
 * import { deviceAuthorization, deviceSession } from 'authchart/device-authorization'
 *
 * const config = { adapter, providers, deviceAuthorization: deviceAuthorization({ clients: [{ clientId: 'acme-cli', name: 'Acme CLI' }] }) }
 * const session = await deviceSession(request, config)
 * if (!session) return new Response(null, { status: 401 })
 * ```
 *
 * @module
 */
import type { DeviceAuthorizationModule, RequestContext } from './config/types.js'
import { route } from './http/params.js'
import { FEATURE } from './modules.js'
import { deviceEndpoints } from './device-authorization/endpoints.js'
import { serveDeviceAnswer, serveDevicePage } from './device-authorization/page.js'
import type { DeviceAuthorizationOptions, DeviceClient } from './device-authorization/types.js'

export type { DeviceAuthorizationModule }
export type {
  DeviceApprover,
  DeviceAuthorizationOptions,
  DeviceClient,
  DeviceCredential,
  ResolvedDeviceAuthorizationOptions,
  StoredDeviceRequest,
} from './device-authorization/types.js'
export { deviceSession } from './device-authorization/session.js'
export { DEVICE_CODE_GRANT, deviceEndpoints } from './device-authorization/endpoints.js'
export { USER_CODE_ALPHABET } from './device-authorization/codes.js'

/** Seconds the codes live by default: ten minutes. */
export const DEFAULT_EXPIRES_IN = 600
/** Seconds between polls by default. */
export const DEFAULT_INTERVAL = 5

const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/

/** Approving is the sensitive action `approve-device`; denying changes nothing that signs anyone in. */
const approving = (ctx: RequestContext) =>
  ctx.request.body?.action === 'approve' ? ('approve-device' as const) : undefined

/**
 * The feature's routes: the approval page (`GET {basePath}/device`, handing out a CSRF token) and
 * the answer (`POST {basePath}/device`, CSRF-checked, approving gated as `approve-device`), both
 * through the one authority for who is signed in.
 */
const ROUTES = Object.freeze([
  route({ method: 'GET', action: 'device', provider: 'none', csrfToken: true, actsForUser: true, serve: serveDevicePage }),
  route({ method: 'POST', action: 'device', provider: 'none', csrf: true, actsForUser: true, stepUp: approving, serve: serveDeviceAnswer }),
])

const wholeIn = (value: number, min: number, max: number) => Number.isSafeInteger(value) && value >= min && value <= max

/**
 * The device authorization module.
 *
 * @throws {TypeError} for no clients, a client id that is not 1–64 letters, digits, `-` or `_`
 *   (or one listed twice), a client without a name, a lifetime outside 60–1,800 s, an interval
 *   outside 1–60 s, an `issue` other than `'session'`, or limits that are not positive whole numbers.
 */
export function deviceAuthorization(options: DeviceAuthorizationOptions): DeviceAuthorizationModule {
  const clients = new Map<string, Readonly<DeviceClient>>()
  if (!Array.isArray(options?.clients) || options.clients.length === 0) throw new TypeError('deviceAuthorization({ clients }) lists at least one client')
  for (const client of options.clients) {
    if (typeof client?.clientId !== 'string' || !CLIENT_ID.test(client.clientId) || clients.has(client.clientId)) {
      throw new TypeError('deviceAuthorization({ clients }): each clientId is 1 to 64 letters, digits, - or _, listed once')
    }
    if (typeof client.name !== 'string' || client.name.trim() === '' || client.name.length > 100) {
      throw new TypeError(`deviceAuthorization({ clients }): client ${client.clientId} needs a name of 1 to 100 characters`)
    }
    clients.set(client.clientId, Object.freeze({ clientId: client.clientId, name: client.name }))
  }
  const expiresIn = options.expiresIn ?? DEFAULT_EXPIRES_IN
  if (!wholeIn(expiresIn, 60, 1800)) throw new TypeError('deviceAuthorization({ expiresIn }) is a whole number of seconds from 60 to 1800')
  const interval = options.interval ?? DEFAULT_INTERVAL
  if (!wholeIn(interval, 1, 60)) throw new TypeError('deviceAuthorization({ interval }) is a whole number of seconds from 1 to 60')
  const issue = options.issue ?? 'session'
  if (issue !== 'session') throw new TypeError("deviceAuthorization({ issue }) is 'session'")
  const limit = { perUser: 10, perAddress: 30, window: 900, ...options.userCodeLimit }
  if (![limit.perUser, limit.perAddress, limit.window].every((value) => wholeIn(value, 1, 1_000_000))) {
    throw new TypeError('deviceAuthorization({ userCodeLimit }) is { perUser, perAddress, window }, positive whole numbers')
  }
  return Object.freeze({
    [FEATURE]: 'device-authorization' as const,
    options: Object.freeze({ clients, expiresIn, interval, issue, userCodeLimit: Object.freeze(limit) }),
    routes: ROUTES,
    serve: deviceEndpoints,
  })
}
