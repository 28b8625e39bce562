/**
 * `{basePath}/api-keys`, the signed-in user's keys over HTTP, JSON both ways:
 *
 * - `GET`: `{ apiKeys: [...] }`, the keys they created (personal and their organisations'), each
 *   with its prefix, name, scopes and times, never a secret or a hash; with `?organizationId=`,
 *   the keys that organisation owns, for a member whose role allows `apiKey:read`;
 * - `POST` (CSRF-checked, and the sensitive action `manage-api-keys`: a stale session is asked to
 *   prove a factor again first) with `{ action, ... }`:
 *   - `create` `{ name, scopes, expiresIn?, organizationId? }`: 201 `{ key, apiKey }`, the key
 *     shown this once;
 *   - `revoke` `{ id }`: 200 `{ apiKey }`;
 *   - `rotate` `{ id, overlap? }`: 200 `{ key, apiKey }`, the old secret working for the overlap.
 *
 * A key the user may not manage (another user's, another organisation's) is answered 404 as one
 * that does not exist, and nothing changes; a member whose role lacks the permission gets 403.
 *
 * @module
 */
import type { RequestContext } from '../config/types.js'
import { JSON_NO_STORE_HEADERS } from '../http/handlers.js'
import { notifyLifecycle } from '../observe/notify.js'
import type { LifecycleChange } from '../observe/types.js'
import { currentSession } from '../session/current.js'
import type { ResponseInternal } from '../types.js'
import { issueApiKey, listed, listKeysOf, listOrganizationKeys, manageableKey, overlapOf, revokeKey, rotateKey, type ApiKeyRefusal } from './manage.js'
import type { ApiKeyAdapter } from './verify.js'

/** A refusal's code, as the JSON body names it. */
export type ApiKeyRouteRefusal = ApiKeyRefusal | 'InvalidRequest'

const STATUS: Record<ApiKeyRouteRefusal, number> = { InvalidRequest: 400, Forbidden: 403, NotFound: 404 }

function json(ctx: RequestContext, body: unknown, status = 200): ResponseInternal {
  return { status, headers: JSON_NO_STORE_HEADERS, body, cookies: ctx.setCookies }
}

const refuse = (ctx: RequestContext, error: ApiKeyRouteRefusal) => json(ctx, { error }, STATUS[error])

const adapterOf = (ctx: RequestContext) => ctx.config.adapter as unknown as ApiKeyAdapter

/** Tells the audit trail (if the configuration has one) of a change, naming the key by its prefix only. */
function recordChange(ctx: RequestContext, kind: LifecycleChange, userId: string, prefix: string): void {
  if (ctx.config.observers.length > 0) notifyLifecycle(ctx, kind, { userId, apiKey: prefix })
}

/**
 * `GET {basePath}/api-keys`: the signed-in user's keys, or with `?organizationId=` the keys that
 * organisation owns (403 unless their role allows `apiKey:read`); 401 `null` signed out.
 */
export async function respondApiKeys(ctx: RequestContext): Promise<ResponseInternal> {
  const current = await currentSession(ctx)
  if (!current) return json(ctx, null, 401)
  const organizationId = ctx.request.query.organizationId
  if (organizationId === undefined) return json(ctx, { apiKeys: await listKeysOf(ctx.config, adapterOf(ctx), current.user.id) })
  if (typeof organizationId !== 'string' || organizationId.length === 0 || organizationId.length > 256) return refuse(ctx, 'InvalidRequest')
  const keys = await listOrganizationKeys(ctx.config, adapterOf(ctx), current.user.id, organizationId)
  return typeof keys === 'string' ? refuse(ctx, keys) : json(ctx, { apiKeys: keys })
}

/** The key id a body names, if it is a string of a plausible length. */
function idOf(body: Readonly<Record<string, unknown>>): string | undefined {
  const id = body.id
  return typeof id === 'string' && id.length > 0 && id.length <= 64 ? id : undefined
}

/** `POST {basePath}/api-keys`: create, revoke or rotate one of the signed-in user's keys. */
export async function manageApiKeys(ctx: RequestContext): Promise<ResponseInternal> {
  const current = await currentSession(ctx)
  if (!current) return json(ctx, null, 401)
  const userId = current.user.id
  const body = ctx.request.body ?? {}
  const adapter = adapterOf(ctx)
  const action = body.action
  if (action === 'create') {
    let issued
    try {
      issued = await issueApiKey(ctx.config, adapter, userId, body as never)
    } catch (error) {
      if (error instanceof TypeError) return refuse(ctx, 'InvalidRequest')
      throw error
    }
    if (typeof issued === 'string') return refuse(ctx, issued)
    recordChange(ctx, 'api-key-created', userId, issued.apiKey.prefix)
    return json(ctx, issued, 201)
  }
  if (action !== 'revoke' && action !== 'rotate') return refuse(ctx, 'InvalidRequest')
  const id = idOf(body)
  if (id === undefined) return refuse(ctx, 'InvalidRequest')
  let overlap: number | undefined
  if (action === 'rotate') {
    try {
      overlap = overlapOf(ctx.config, body.overlap)
    } catch {
      return refuse(ctx, 'InvalidRequest')
    }
  }
  const key = await manageableKey(ctx.config, adapter, userId, id, action === 'revoke' ? ['revoke'] : ['create', 'revoke'])
  if (typeof key === 'string') return refuse(ctx, key)
  if (action === 'revoke') {
    const revoked = await revokeKey(adapter, key)
    // Revoked already: there is no live key of that id to revoke.
    if (!revoked) return refuse(ctx, 'NotFound')
    const apiKey = listed(revoked, ctx.config.apiKeys!.options.prefix)
    recordChange(ctx, 'api-key-revoked', userId, apiKey.prefix)
    return json(ctx, { apiKey })
  }
  const rotated = await rotateKey(ctx.config, adapter, key, overlap!)
  if (!rotated) return refuse(ctx, 'NotFound')
  recordChange(ctx, 'api-key-rotated', userId, rotated.apiKey.prefix)
  return json(ctx, rotated)
}
