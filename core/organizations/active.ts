/**
 * The active organisation of a signed-in user: which organisation their requests act in.
 *
 * It is kept in a cookie of its own, signed with the configuration's secret and bound to the user
 * it was set for, the same under JWT and database sessions. The cookie only ever names a choice:
 * every read re-checks the membership against the adapter, so a removed or suspended member's next
 * request has no organisation, on every instance, whatever the cookie, the session token or the
 * application's callbacks say (an `activeOrganizationId` they carry is dropped, never trusted).
 *
 * @module
 */
import { hkdfSha256, timingSafeEqual, toHex } from '../crypto.js'
import type { RequestContext, ResolvedConfig } from '../config/types.js'
import { JSON_NO_STORE_HEADERS } from '../http/handlers.js'
import { currentSession } from '../session/current.js'
import type { Cookie, ResponseInternal } from '../types.js'
import { activeOrganizationOf } from './access.js'
import type { AdapterMembership } from './types.js'

/** The key of the session field the session read sets, and the body field the switch route reads. */
export const ACTIVE_ORGANIZATION_FIELD = 'activeOrganizationId'

/** The `{basePath}/organization/<segment>` of the switch route. */
export const ACTIVE_SEGMENT = 'active'

/** The cookie that carries the choice, named after the session cookie (same prefix, same attributes). */
export function activeOrganizationCookieName(ctx: Pick<RequestContext, 'cookies'>): string {
  const session = ctx.cookies.sessionToken.name
  return session.includes('session-token') ? session.replace('session-token', 'active-organization') : `${session}-active-organization`
}

const macKeys = new Map<string, Promise<CryptoKey>>()

function macKey(secret: string): Promise<CryptoKey> {
  let key = macKeys.get(secret)
  if (!key) {
    key = hkdfSha256(secret, 'authchart.active-organization', 'authchart active organisation cookie', 32).then((bytes) =>
      crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
    )
    if (macKeys.size > 16) macKeys.clear()
    macKeys.set(secret, key)
  }
  return key
}

/** The MAC binding `organizationId` to `userId` (so one user's cookie means nothing for another). */
async function mac(secret: string, userId: string, organizationId: string): Promise<string> {
  const signed = await crypto.subtle.sign('HMAC', await macKey(secret), new TextEncoder().encode(`${userId.length}:${userId}|${organizationId}`))
  return toHex(new Uint8Array(signed))
}

/** The cookie value naming `organizationId` for `userId`. */
export async function signActiveOrganization(config: ResolvedConfig, userId: string, organizationId: string): Promise<string> {
  return `${encodeURIComponent(organizationId)}.${await mac(config.secrets[0], userId, organizationId)}`
}

/**
 * The organisation the cookie value names for `userId`, when its MAC is right under one of the
 * configuration's secrets; `undefined` otherwise (tampered, or set for another user).
 */
export async function verifyActiveOrganization(config: ResolvedConfig, userId: string, value: string | undefined): Promise<string | undefined> {
  if (!value) return undefined
  const dot = value.lastIndexOf('.')
  if (dot <= 0) return undefined
  let organizationId: string
  try {
    organizationId = decodeURIComponent(value.slice(0, dot))
  } catch {
    return undefined
  }
  const given = value.slice(dot + 1)
  for (const secret of config.secrets) {
    if (timingSafeEqual(given, await mac(secret, userId, organizationId))) return organizationId
  }
  return undefined
}

/**
 * The request's active organisation and membership for `userId`: the organisation the cookie
 * names, while the user's membership of it is active (re-read from the adapter); `null` otherwise.
 */
export async function activeMembershipOf(ctx: RequestContext, userId: string): Promise<AdapterMembership | null> {
  const organizationId = await verifyActiveOrganization(ctx.config, userId, ctx.request.cookies[activeOrganizationCookieName(ctx)])
  const active = await activeOrganizationOf({ user: { id: userId }, activeOrganizationId: organizationId }, ctx.config)
  return active?.membership ?? null
}

/**
 * The session the session route answers with, with `activeOrganizationId` set to the request's
 * active organisation while the membership is active, and removed otherwise: a value the token or
 * a callback put there is never passed on unchecked.
 */
export async function withActiveOrganization(ctx: RequestContext, userId: string | undefined, session: unknown): Promise<unknown> {
  if (typeof session !== 'object' || session === null) return session
  const { [ACTIVE_ORGANIZATION_FIELD]: _untrusted, ...rest } = session as Record<string, unknown>
  if (typeof userId !== 'string') return rest
  const membership = await activeMembershipOf(ctx, userId)
  return membership ? { ...rest, [ACTIVE_ORGANIZATION_FIELD]: membership.organizationId } : rest
}

/** A JSON answer, never cached, with the cookies the request set so far (a minted CSRF token's). */
function json(ctx: RequestContext, body: unknown, status = 200): ResponseInternal {
  return { status, headers: JSON_NO_STORE_HEADERS, body, cookies: ctx.setCookies }
}

/** The cookie naming the choice, or deleting it (`value` empty). */
function choiceCookie(ctx: RequestContext, value: string): Cookie {
  const { options } = ctx.cookies.sessionToken
  return { name: activeOrganizationCookieName(ctx), value, options: value === '' ? { ...options, maxAge: 0 } : { ...options } }
}

/** The route's answer about the signed-in user's active organisation. */
function activeAnswer(membership: AdapterMembership | null): { activeOrganizationId: string | null; role: string | null } {
  return { activeOrganizationId: membership?.organizationId ?? null, role: membership?.role ?? null }
}

/**
 * `GET {basePath}/organization/active`: the signed-in user's active organisation and their role in
 * it, re-read (`{ activeOrganizationId: null, role: null }` without one); 401 `null` signed out.
 */
export async function respondActiveOrganization(ctx: RequestContext): Promise<ResponseInternal> {
  if (ctx.request.providerId !== ACTIVE_SEGMENT) return json(ctx, { error: 'NotFound' }, 404)
  const current = await currentSession(ctx)
  if (!current) return json(ctx, null, 401)
  return json(ctx, activeAnswer(await activeMembershipOf(ctx, current.user.id)))
}

/**
 * `POST {basePath}/organization/active` (CSRF-checked by its route), JSON `{ organizationId }`:
 * makes it the signed-in user's active organisation when they are an active member of it; `null`
 * clears the choice. The organisation is read from the body only (a query parameter is never
 * read), and a refusal changes nothing.
 */
export async function setActiveOrganization(ctx: RequestContext): Promise<ResponseInternal> {
  if (ctx.request.providerId !== ACTIVE_SEGMENT) return json(ctx, { error: 'NotFound' }, 404)
  const current = await currentSession(ctx)
  if (!current) return json(ctx, null, 401)
  const requested = ctx.request.body?.organizationId
  if (requested === null) {
    ctx.setCookies.push(choiceCookie(ctx, ''))
    return json(ctx, activeAnswer(null))
  }
  if (typeof requested !== 'string' || requested === '' || requested.length > 256) return json(ctx, { error: 'InvalidOrganization' }, 400)
  const userId = current.user.id
  const active = await activeOrganizationOf({ user: { id: userId }, activeOrganizationId: requested }, ctx.config)
  // Not a member, not an active one, or no such organisation: one answer, so ids cannot be probed.
  if (!active) return json(ctx, { error: 'NotAMember' }, 403)
  const value = await signActiveOrganization(ctx.config, userId, active.organization.id)
  ctx.setCookies.push(choiceCookie(ctx, value))
  return json(ctx, activeAnswer(active.membership))
}
