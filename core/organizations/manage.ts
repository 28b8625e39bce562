/**
 * `POST {basePath}/organization/create` `{ slug, name }` with a JSON body (CSRF-checked by the
 * route), for the signed-in user only: a new organisation, its creator its owner. The changes of an
 * existing organisation and of its members are the membership chart's (`./members.ts`).
 *
 * @module
 */
import type { RequestContext } from '../config/types.js'
import { JSON_NO_STORE_HEADERS } from '../http/handlers.js'
import { currentSession } from '../session/current.js'
import type { ResponseInternal } from '../types.js'
import { SLUG } from './members.js'
import type { AdapterOrganization } from './types.js'

/** A refusal's code, as the JSON body names it. */
export type ManagementRefusal = 'InvalidRequest' | 'SlugTaken'

const STATUS: Record<ManagementRefusal, number> = { InvalidRequest: 400, SlugTaken: 409 }

function json(ctx: RequestContext, body: unknown, status = 200): ResponseInternal {
  return { status, headers: JSON_NO_STORE_HEADERS, body, cookies: ctx.setCookies }
}

const refuse = (ctx: RequestContext, error: ManagementRefusal) => json(ctx, { error }, STATUS[error])

const stringField = (body: Readonly<Record<string, unknown>> | undefined, name: string, max = 256): string | undefined => {
  const value = body?.[name]
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined
}

const organizationAnswer = (organization: AdapterOrganization) => ({ id: organization.id, slug: organization.slug, name: organization.name })

/** `create`: a new organisation whose owner is the signed-in user. */
async function createOrganization(ctx: RequestContext, userId: string): Promise<ResponseInternal> {
  const body = ctx.request.body
  const slug = stringField(body, 'slug', 48)
  const name = stringField(body, 'name', 200)
  if (slug === undefined || !SLUG.test(slug) || name === undefined) return refuse(ctx, 'InvalidRequest')
  const adapter = ctx.config.adapter!
  if (await adapter.getOrganizationBySlug!(slug)) return refuse(ctx, 'SlugTaken')
  const createdAt = new Date(ctx.at * 1000)
  const organization: AdapterOrganization = { id: crypto.randomUUID(), slug, name, verifiedDomains: [], metadata: {}, createdAt }
  try {
    await adapter.createOrganization!(organization)
  } catch (error) {
    // A concurrent creation took the slug between the read and the write: the store refused it.
    if (await adapter.getOrganizationBySlug!(slug)) return refuse(ctx, 'SlugTaken')
    throw error
  }
  await adapter.createMembership!({ organizationId: organization.id, userId, role: 'owner', status: 'active', createdAt })
  return json(ctx, { organization: organizationAnswer(organization), role: 'owner' }, 201)
}

/** The management segments under `{basePath}/organization/`. */
export const MANAGEMENT_SEGMENTS = Object.freeze(['create'] as const)

/**
 * Serves `POST {basePath}/organization/create`; `undefined` for another segment. 401 `null` signed
 * out.
 */
export async function manageOrganization(ctx: RequestContext): Promise<ResponseInternal | undefined> {
  if (ctx.request.providerId !== 'create') return undefined
  const current = await currentSession(ctx)
  if (!current) return json(ctx, null, 401)
  return createOrganization(ctx, current.user.id)
}
