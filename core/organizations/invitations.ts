/**
 * Invitations to an organisation, run by the invitation chart (`machines/organization-invitation.*`):
 *
 * - `POST {basePath}/organization/invite` `{ email, role }`: a member whose role allows
 *   `invitation:create` in their ACTIVE organisation invites an address to a role no higher than
 *   their own; the accept link is e-mailed (the organisations' `sendInvitation`, else the e-mail
 *   provider's sender);
 * - `GET {basePath}/organization/invitation?id=…&token=…`: the link's page, which changes nothing
 *   (mail scanners and link previews fetch it), with Accept and Decline buttons that post back;
 * - `POST {basePath}/organization/invitation` `{ action: 'accept' | 'decline', id, token }` from the
 *   signed-in user whose stored, verified address is the invited one, or `{ action: 'revoke', id }`
 *   from a member allowed to revoke in the invitation's organisation.
 *
 * The token is an HMAC of the invitation id under the configuration's secret: it is stored
 * nowhere, and logged nowhere (a sender's error is scrubbed). Each settlement is the adapter's
 * atomic `settleInvitation`, so an invitation is accepted, declined or revoked once, whatever is
 * replayed; the membership is made active only after the invitation is settled as accepted.
 *
 * @module
 */
import { ORGANIZATION_INVITATION, OrganizationInvitationContext } from '../../machines/organization-invitation.logic.js'
import type { organizationInvitationMachine } from '../../machines/organization-invitation.machine.js'
import { organizationInvitationChart } from '../charts/organization-invitation.js'
import type { FlowModule, RequestContext } from '../config/types.js'
import { hkdfSha256, timingSafeEqual, toHex } from '../crypto.js'
import { advanceNow } from '../engine/advance.js'
import { defineCompiledFlow } from '../engine/compiled-flow.js'
import { EmailSignInError, kindOfType } from '../errors.js'
import { effects, fail } from '../flows/effect.js'
import { errorRedirectUrl } from '../http/dispatch.js'
import { HTML_NO_STORE_HEADERS, JSON_NO_STORE_HEADERS } from '../http/handlers.js'
import { notifyRun, observedRunOptions } from '../observe/notify.js'
import { escapeHtml, hiddenCsrf } from '../pages/html.js'
import { renderCard } from '../pages/index.js'
import { currentSession } from '../session/current.js'
import { admitAttempt } from '../store/limits.js'
import type { ResponseInternal } from '../types.js'
import { activeMembershipOf } from './active.js'
import { mayGrant, roleAllows, type Roles } from './roles.js'
import type { AdapterInvitation } from './types.js'

/** An invitation message, as the application's sender gets it. */
export interface InvitationMail {
  to: string
  subject: string
  text: string
  /** The accept link (it carries the token: do not log it). */
  url: string
  organization: { id: string; name: string }
  role: string
  expires: Date
}

/** The invitation settings of `organizations({ invitations })`. */
export interface InvitationOptions {
  /** Seconds an invitation can be accepted: 7 days by default. */
  maxAge?: number | undefined
  /** Invitations allowed per window (seconds), per organisation and per inviter. */
  limit?: { perOrganization?: number; perInviter?: number; window?: number } | undefined
  /** Sends the message; without it, the configured e-mail provider's `sendVerificationRequest`. */
  send?: ((mail: InvitationMail) => unknown) | undefined
}

/** The invitation settings with their defaults. */
export interface ResolvedInvitationOptions {
  maxAge: number
  limit: { perOrganization: number; perInviter: number; window: number }
  send: ((mail: InvitationMail) => unknown) | undefined
}

/** By default an invitation lives 7 days; 50 an hour per organisation, 20 per inviter. */
export const DEFAULT_INVITATIONS: ResolvedInvitationOptions = Object.freeze({
  maxAge: 7 * 86_400,
  limit: Object.freeze({ perOrganization: 50, perInviter: 20, window: 3600 }),
  send: undefined,
})

/** The settings with the defaults filled in. */
export function invitationOptionsOf(options: InvitationOptions = {}): ResolvedInvitationOptions {
  return Object.freeze({
    maxAge: options.maxAge ?? DEFAULT_INVITATIONS.maxAge,
    limit: Object.freeze({ ...DEFAULT_INVITATIONS.limit, ...options.limit }),
    send: options.send,
  })
}

/** The invitation segments under `{basePath}/organization/`. */
export const INVITATION_SEGMENTS = Object.freeze(['invite', 'invitation'] as const)

async function tokenKey(secret: string): Promise<CryptoKey> {
  const bytes = await hkdfSha256(secret, 'authchart.organization-invitation', 'authchart organisation invitation link', 32)
  return crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
}

/** The link token of invitation `id` under `secret`. */
export async function invitationToken(secret: string, id: string): Promise<string> {
  const signed = await crypto.subtle.sign('HMAC', await tokenKey(secret), new TextEncoder().encode(id))
  return toHex(new Uint8Array(signed))
}

/** Whether `token` is the link token of `id` under one of the secrets (compared in constant time). */
async function isInvitationToken(secrets: readonly string[], id: string, token: string): Promise<boolean> {
  for (const secret of secrets) if (timingSafeEqual(token, await invitationToken(secret, id))) return true
  return false
}

const roles = (ctx: RequestContext): Roles => ctx.config.organizations!.roles
const settings = (ctx: RequestContext): ResolvedInvitationOptions => ctx.config.organizations!.invitations
const adapterOf = (ctx: RequestContext) => ctx.config.adapter!
const dateOf = (ctx: RequestContext) => new Date(ctx.at * 1000)

/** An address as invitations store it: trimmed, lower case, of a plausible form; `null` otherwise. */
function invitedAddress(value: string | null): string | null {
  const address = (value ?? '').trim().toLowerCase()
  return address.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address) ? address : null
}

/** The store key marking an accepted invitation whose membership is not active yet. */
const activatingKey = (id: string) => `organization-invitation:activating:${id}`

/** Sends the invitation's message; a failure is logged with the link scrubbed, and thrown on. */
async function sendMail(ctx: RequestContext, mail: InvitationMail): Promise<void> {
  const own = settings(ctx).send
  try {
    if (own) {
      await own(mail)
      return
    }
    const email = ctx.config.providers.find((candidate) => candidate.type === 'email')
    if (!email) throw new TypeError('organisation invitations have no way to send e-mail: give organizations({ invitations: { send } }), or configure an e-mail provider')
    const config = email.config as unknown as { sendVerificationRequest: (params: Record<string, unknown>) => unknown }
    await config.sendVerificationRequest({ identifier: mail.to, url: mail.url, token: '', expires: mail.expires, provider: config, theme: ctx.config.theme, request: ctx.raw })
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split(mail.url).join('[redacted]')
    throw new EmailSignInError(new Error(message.replace(/[0-9a-f]{64}/g, '[redacted]')))
  }
}

type InvitationMachine = typeof organizationInvitationMachine

/** Refuses with `code` (the JSON answer's `error`) and, for the confirmation page, the error page `error`. */
const refused = (code: string, error: 'AccessDenied' | 'Verification' = 'Verification') => fail('refused', { error, code })
const forbidden = (code = 'Forbidden') => fail('forbidden', { error: 'AccessDenied', code })

const invitationEffects = effects<InvitationMachine, RequestContext>(organizationInvitationChart, {
  async admitInvitation(context, ctx) {
    const actor = await activeMembershipOf(ctx, context.userId)
    if (!actor) return forbidden('NoActiveOrganization')
    const named = bodyOf(ctx).organizationId
    // The organisation invited to is the active one; a body naming another is a forged or stale id.
    if (named !== undefined && named !== actor.organizationId) return forbidden('NotActiveOrganization')
    if (!roleAllows(roles(ctx), actor.role, { resource: 'invitation', action: 'create' })) return forbidden()
    const email = invitedAddress(context.email)
    const role = context.role ?? ''
    if (email === null || !Object.hasOwn(roles(ctx), role)) return fail('invalid', { error: 'AccessDenied', code: 'InvalidRequest' })
    // Nobody invites to a role above their own (nor one with a permission they lack).
    if (!mayGrant(roles(ctx), actor.role, role)) return forbidden()
    const { limit } = settings(ctx)
    const admission = await admitAttempt(
      ctx.config.store,
      'organization-invitation',
      ctx.config.secrets[0],
      [
        { kind: 'organization', value: actor.organizationId, limit: { points: limit.perOrganization, window: limit.window } },
        { kind: 'inviter', value: context.userId, limit: { points: limit.perInviter, window: limit.window } },
      ],
      ctx.logger,
    )
    if (!admission.allowed) return fail('limited', { error: 'AccessDenied', code: 'TooManyInvitations', retryAfter: admission.retryAfter })
    return { organizationId: actor.organizationId, email }
  },

  async sendInvitation(context, ctx) {
    const adapter = adapterOf(ctx)
    // An organisation gone since the admission throws here (answered 503), before anything is stored.
    const organization = (await adapter.getOrganization!(context.organizationId!))!
    const expires = ctx.at + settings(ctx).maxAge
    const invitation: AdapterInvitation = {
      id: crypto.randomUUID(),
      organizationId: organization.id,
      email: context.email!,
      role: context.role!,
      inviterId: context.userId,
      expires: new Date(expires * 1000),
      status: 'sent',
      createdAt: dateOf(ctx),
    }
    await adapter.createInvitation!(invitation)
    const token = await invitationToken(ctx.config.secrets[0], invitation.id)
    const url = `${ctx.authUrl}/organization/invitation?${new URLSearchParams({ id: invitation.id, token })}`
    const host = new URL(ctx.authUrl).host
    try {
      await sendMail(ctx, {
        to: invitation.email,
        subject: `You are invited to join ${organization.name}`,
        text: `You are invited to join ${organization.name} on ${host} as ${invitation.role}. Sign in with this address, then open:\n${url}\n\nIf you did not expect it, ignore this message.\n`,
        url,
        organization: { id: organization.id, name: organization.name },
        role: invitation.role,
        expires: invitation.expires,
      })
    } catch (error) {
      // Nobody got the link: the invitation must not stay open behind the inviter's back.
      await adapter.settleInvitation!({ id: invitation.id, status: 'revoked', at: dateOf(ctx) })
      throw error
    }
    return { invitationId: invitation.id, expires }
  },

  async checkInvitee(context, ctx) {
    const adapter = adapterOf(ctx)
    const invitation = await adapter.getInvitation!(context.invitationId!)
    // A bad token and an unknown id are one answer: ids cannot be probed.
    if (!invitation || !(await isInvitationToken(ctx.config.secrets, invitation.id, context.token!))) return refused('NotFound')
    const user = await adapter.getUser!(context.userId)
    // GHSA-fmh4-wcc4-5jm3: the link alone proves nothing; the signed-in user must own the address.
    if (!user || String(user.email).trim().toLowerCase() !== invitation.email) return refused('WrongAddress', 'AccessDenied')
    if (!user.emailVerified) return refused('AddressNotVerified', 'AccessDenied')
    const membership = await adapter.getMembership!(invitation.organizationId, context.userId)
    const completing = invitation.status === 'accepted' && membership?.status === 'invited' && (await ctx.config.store.get(activatingKey(invitation.id))) === context.userId
    if (invitation.status !== 'sent' && !completing) return refused('NotPending')
    if (!completing && new Date(invitation.expires).getTime() <= ctx.at * 1000) return fail('expired', { error: 'Verification', code: 'Expired' })
    if (context.intent === 'accept') {
      if (membership?.status === 'active') return refused('AlreadyAMember')
      if (membership?.status === 'suspended') return refused('Forbidden', 'AccessDenied')
      // The inviter's right is re-read: a demoted or removed inviter's invitations grant nothing above them.
      const inviter = await adapter.getMembership!(invitation.organizationId, invitation.inviterId)
      const stillAllowed =
        inviter?.status === 'active' &&
        roleAllows(roles(ctx), inviter.role, { resource: 'invitation', action: 'create' }) &&
        mayGrant(roles(ctx), inviter.role, invitation.role)
      if (!stillAllowed) return refused('Forbidden', 'AccessDenied')
    }
    return { organizationId: invitation.organizationId, role: invitation.role }
  },

  async expireInvitation(context, ctx) {
    await adapterOf(ctx).settleInvitation!({ id: context.invitationId!, status: 'expired', at: dateOf(ctx) })
    return null
  },

  async acceptInvitation(context, ctx) {
    const adapter = adapterOf(ctx)
    const organizationId = context.organizationId!
    const userId = context.userId
    const role = context.role!
    const id = context.invitationId!
    const membership = await adapter.getMembership!(organizationId, userId)
    if (membership?.status === 'active') return refused('AlreadyAMember')
    // First a membership that grants nothing, then the one-time settlement, then its activation:
    // a failure between the steps leaves no member, and the same user's retry completes it.
    if (!membership) {
      try {
        await adapter.createMembership!({ organizationId, userId, role, status: 'invited', createdAt: dateOf(ctx) })
      } catch (error) {
        // A concurrent answer created it between the read and the write: the settlement below decides.
        const created = await adapter.getMembership!(organizationId, userId)
        if (!created) throw error
        if (created.status === 'active') return refused('AlreadyAMember')
      }
    } else await adapter.updateMembership!({ organizationId, userId, role, status: 'invited' })
    const invitation = await adapter.getInvitation!(id)
    if (invitation?.status === 'sent') {
      await ctx.config.store.put(activatingKey(id), userId, settings(ctx).maxAge)
      const settled = await adapter.settleInvitation!({ id, status: 'accepted', at: dateOf(ctx) })
      if (!settled) return refused('NotPending')
    } else if (!(invitation?.status === 'accepted' && (await ctx.config.store.get(activatingKey(id))) === userId)) {
      return refused('NotPending')
    }
    const active = await adapter.updateMembership!({ organizationId, userId, role, status: 'active' })
    if (!active) throw new Error('the membership vanished while it was activated')
    await ctx.config.store.reset(activatingKey(id))
    return null
  },

  async declineInvitation(context, ctx) {
    const settled = await adapterOf(ctx).settleInvitation!({ id: context.invitationId!, status: 'declined', at: dateOf(ctx) })
    return settled ? null : refused('NotPending')
  },

  async checkRevoker(context, ctx) {
    const actor = await activeMembershipOf(ctx, context.userId)
    if (!actor) return forbidden('NoActiveOrganization')
    const invitation = await adapterOf(ctx).getInvitation!(context.invitationId!)
    // An invitation of another organisation is one that does not exist (no IDOR by id).
    if (!invitation || invitation.organizationId !== actor.organizationId) return refused('NotFound')
    if (!roleAllows(roles(ctx), actor.role, { resource: 'invitation', action: 'revoke' }) || !mayGrant(roles(ctx), actor.role, invitation.role)) {
      return forbidden()
    }
    // One no longer pending is refused by the one-time settlement that follows.
    return { organizationId: invitation.organizationId }
  },

  async revokeInvitation(context, ctx) {
    const settled = await adapterOf(ctx).settleInvitation!({ id: context.invitationId!, status: 'revoked', at: dateOf(ctx) })
    return settled ? null : refused('NotPending')
  },
})

/** The invitation flow, as the engine runs it (its routes are the organisations module's). */
export const organizationInvitationFlow = defineCompiledFlow<InvitationMachine, RequestContext>({
  chart: organizationInvitationChart,
  context: OrganizationInvitationContext,
  effects: invitationEffects,
  notation: () => import('../../machines/organization-invitation.machine.js').then((module) => module.organizationInvitationMachine),
})

/**
 * The invitation flow as a flow module, for the readers of every chart (the diagrams, the test
 * kit, the inspector): run by a configuration with `organizations()`.
 */
export const organizationInvitationModule: FlowModule = {
  id: ORGANIZATION_INVITATION,
  flow: organizationInvitationFlow as unknown as FlowModule['flow'],
  runs: (config) => config.organizations !== undefined,
}

/** The request's body fields (none for a request without a body). */
const bodyOf = (ctx: RequestContext): Readonly<Record<string, unknown>> => ctx.request.body ?? {}

const text = (body: Readonly<Record<string, unknown>>, name: string, max = 256): string => {
  const value = body[name]
  return typeof value === 'string' && value.length <= max ? value : ''
}

function json(ctx: RequestContext, body: unknown, status = 200, headers: Record<string, string> = {}): ResponseInternal {
  return { status, headers: { ...JSON_NO_STORE_HEADERS, ...headers }, body, cookies: ctx.setCookies }
}

/** Whether the request was posted by the link's page (a form), not by a script (JSON). */
const fromPage = (ctx: RequestContext) => /application\/x-www-form-urlencoded|multipart\/form-data/i.test(ctx.raw.headers.get('content-type') ?? '')

/** The sign-in page, coming back to `url` after the sign-in. */
function signInThenBack(ctx: RequestContext, url: string): ResponseInternal {
  const signIn = ctx.config.pages.signIn ?? `${ctx.authUrl}/signin`
  return { redirect: `${signIn}${signIn.includes('?') ? '&' : '?'}${new URLSearchParams({ callbackUrl: url })}`, cookies: ctx.setCookies }
}

/** The link's URL (to come back to after signing in). */
const linkUrl = (ctx: RequestContext, id: string, token: string) => `${ctx.authUrl}/organization/invitation?${new URLSearchParams({ id, token })}`

/** The event a request makes, or `undefined` for a malformed one. */
function eventOf(ctx: RequestContext, segment: 'invite' | 'invitation', userId: string, answer: 'json' | 'page') {
  const body = bodyOf(ctx)
  const common = { at: ctx.at, userId, answer, answerUrl: ctx.callbackUrl }
  if (segment === 'invite') return { type: 'invitation.send', ...common, email: text(body, 'email', 320), role: text(body, 'role', 64) }
  const action = body.action
  const id = text(body, 'id') || text(body, 'invitationId')
  if (id === '') return undefined
  if (action === 'revoke') return { type: 'invitation.revoke', ...common, invitationId: id }
  if (action !== 'accept' && action !== 'decline') return undefined
  return { type: `invitation.${action}`, ...common, invitationId: id, token: text(body, 'token', 128) }
}

/**
 * Serves `POST {basePath}/organization/<invite | invitation>` (CSRF-checked by the route); 401
 * `null` signed out (the link's page: to the sign-in page and back). An adapter, store or sender
 * that fails answers 503 with `Retry-After`.
 */
export async function serveInvitationPost(ctx: RequestContext, segment: 'invite' | 'invitation'): Promise<ResponseInternal> {
  const answer = segment === 'invitation' && fromPage(ctx) ? 'page' : 'json'
  const current = await currentSession(ctx)
  if (!current) {
    if (answer === 'page') return signInThenBack(ctx, linkUrl(ctx, text(bodyOf(ctx), 'id'), text(bodyOf(ctx), 'token', 128)))
    return json(ctx, null, 401)
  }
  const event = eventOf(ctx, segment, current.user.id, answer)
  if (!event) return json(ctx, { error: 'InvalidRequest' }, 400)
  const run = await advanceNow(organizationInvitationFlow, ctx, event, observedRunOptions(ctx))
  notifyRun(ctx, ORGANIZATION_INVITATION, run)
  const outcome = run.outcome
  if (outcome.type === 'redirect') return { redirect: outcome.url, cookies: ctx.setCookies }
  if (outcome.type === 'error') {
    return {
      redirect: errorRedirectUrl(ctx.config, ctx.origin, outcome.error, kindOfType(outcome.error), outcome.code, outcome.retryAfter),
      cookies: ctx.setCookies,
    }
  }
  if (outcome.type !== 'json') throw new Error(`${ORGANIZATION_INVITATION}: unexpected outcome ${outcome.type}`)
  const status = outcome.status ?? 200
  const retryAfter = (outcome.body as { retryAfter?: number }).retryAfter ?? ctx.config.availability.retryAfter
  return json(ctx, outcome.body, status, status === 429 || status === 503 ? { 'Retry-After': String(retryAfter) } : {})
}

/**
 * `GET {basePath}/organization/invitation?id=…&token=…`: the link's page, which reads and spends
 * nothing, so that a scanner or preview fetching it accepts nothing; its buttons post the answer
 * with a CSRF token. Signed out: to the sign-in page, and back here after it.
 */
export async function serveInvitationPage(ctx: RequestContext): Promise<ResponseInternal> {
  const id = ctx.request.query.id ?? ''
  const token = ctx.request.query.token ?? ''
  const current = await currentSession(ctx)
  if (!current) return signInThenBack(ctx, linkUrl(ctx, id, token))
  const action = `${ctx.authUrl}/organization/invitation`
  // After the answer: where the link asked to go, else the site (the remembered callback URL is this link itself after signing in).
  const after = ctx.request.query.callbackUrl !== undefined ? ctx.callbackUrl : ctx.origin
  const form = (answer: 'accept' | 'decline', label: string) =>
    `<form action="${escapeHtml(action)}" method="POST">${hiddenCsrf(ctx.csrf!.token)}` +
    `<input type="hidden" name="action" value="${answer}"><input type="hidden" name="id" value="${escapeHtml(id)}">` +
    `<input type="hidden" name="token" value="${escapeHtml(token)}"><input type="hidden" name="callbackUrl" value="${escapeHtml(after)}">` +
    `<button id="${answer}Button" type="submit"><span>${label}</span></button></form>`
  const html = renderCard(
    'Invitation',
    ctx.config.theme,
    `<h1>Join the organisation</h1><p>You were invited as <strong class="address">${escapeHtml(String(current.user.email ?? ''))}</strong>.</p>` +
      form('accept', 'Accept the invitation') +
      form('decline', 'Decline'),
  )
  // The page's URL holds the token: out of caches and out of any Referer header.
  return { status: 200, headers: { ...HTML_NO_STORE_HEADERS, 'Referrer-Policy': 'no-referrer' }, body: html, cookies: ctx.setCookies }
}
