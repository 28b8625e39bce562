/**
 * `GET {basePath}/audit` with an audit store: the signed-in user's recent security activity
 * (sign-ins, refusals, sign-outs, factor changes), as JSON, or as a page when the request asks for
 * HTML. The route itself (`core/http/activity.ts`) decides who is signed in; only their own events
 * are listed.
 *
 * @module
 */
import { ACTIVITY_LIMIT, ACTIVITY_PAGE_HEADERS, activityJson } from '../http/activity.js'
import type { RequestContext } from '../http/context.js'
import { ACTION_LABELS } from '../flows/reauthenticate/policy.js'
import { escapeHtml } from '../pages/html.js'
import { readableTime } from '../pages/sessions.js'
import { renderCardPage } from '../pages/steps.js'
import type { ResponseInternal } from '../types.js'
import type { AuditEvent, AuditStore } from './types.js'

export { ACTIVITY_LIMIT }

/** `GET /audit` for the signed-in `user`: their own events from `store`, newest first. */
export async function listActivity(ctx: RequestContext, store: AuditStore, user: { id: string }, page: boolean): Promise<ResponseInternal> {
  const listed = await store.listForUser(user.id, { limit: ACTIVITY_LIMIT })
  // A store that answers more than asked (another user's rows) must not show them.
  const own = listed.filter((event) => event.userId === user.id).slice(0, ACTIVITY_LIMIT)
  if (!page) return activityJson(own.map(forTheUser))
  const rendered = renderActivityPage(ctx.config.theme, own)
  return { status: rendered.status, headers: ACTIVITY_PAGE_HEADERS, body: rendered.html, cookies: ctx.setCookies }
}

/** What the user sees of an event: what happened, when, from which browser; not the states passed. */
function forTheUser(event: AuditEvent) {
  return {
    id: event.id,
    time: event.time,
    kind: event.kind,
    ...(event.provider !== undefined ? { provider: event.provider } : {}),
    ...(event.outcome !== undefined ? { outcome: event.outcome.type, ...('error' in event.outcome ? { error: event.outcome.error } : {}) } : {}),
    ...(event.client.userAgent !== undefined ? { userAgent: event.client.userAgent } : {}),
    ...(event.amr !== undefined ? { amr: event.amr } : {}),
    ...(event.action !== undefined ? { action: event.action } : {}),
    ...(event.apiKey !== undefined ? { apiKey: event.apiKey } : {}),
  }
}

const KIND_LABELS: Readonly<Record<string, string>> = {
  'sign-out': 'Signed out',
  'sign-out-everywhere': 'Signed out everywhere',
  'session-revoked': 'Signed another session out',
  'second-factor-enrolled': 'Turned on two-step verification',
  'second-factor-removed': 'Turned off two-step verification',
  'passkey-added': 'Added a passkey',
  'account-linked': 'Linked a sign-in method',
  'rate-limited': 'Too many attempts: sign-in paused',
  reauthenticated: "Confirmed it's you",
  'api-key-created': 'Created an API key',
  'api-key-revoked': 'Revoked an API key',
  'api-key-rotated': 'Rotated an API key',
  'api-key-refused': 'An API key was refused',
  'device-authorization-requested': 'A device asked to sign in',
  'device-authorization-approved': 'Signed a device in',
  'device-authorization-denied': 'Refused to sign a device in',
  'device-authorization-redeemed': 'A device received its sign-in',
}

/** One line of the activity list: "Signed in with credentials", "Sign-in refused (CredentialsSignin)". */
export function describeEvent(event: AuditEvent): string {
  const via = event.provider ? ` with ${event.provider}` : ''
  if (event.kind === 'reauthenticated') {
    const action = event.action !== undefined ? ACTION_LABELS[event.action] : undefined
    return `${KIND_LABELS[event.kind]}${action ? ` to ${action}` : ''}`
  }
  if (event.kind.startsWith('api-key-') && event.apiKey !== undefined) return `${KIND_LABELS[event.kind] ?? event.kind} (${event.apiKey})`
  if (event.kind !== 'flow') return `${KIND_LABELS[event.kind] ?? event.kind}${event.kind === 'account-linked' ? via : ''}`
  switch (event.outcome?.type) {
    case 'signed-in':
      return `Signed in${via}`
    case 'refused':
      return `Sign-in${via} refused (${event.outcome.error})`
    default:
      return `Sign-in${via} started`
  }
}

/** The activity page: the user's events, newest first. */
export function renderActivityPage(theme: Parameters<typeof renderCardPage>[1], events: readonly AuditEvent[]) {
  const items = events
    .map((event) => {
      const details = [readableTime(event.time), event.client.userAgent].filter(Boolean).join(', ')
      return `<li class="session"><p><strong>${escapeHtml(describeEvent(event))}</strong></p><p class="muted">${escapeHtml(details)}</p></li>`
    })
    .join('')
  const body = events.length > 0 ? `<ul class="sessions">${items}</ul>` : '<p>No activity yet.</p>'
  return renderCardPage(
    'Recent activity',
    theme,
    `<h1>Recent activity</h1><p>Sign-ins and security changes on your account. Tell us about anything you do not recognise.</p>${body}`,
  )
}
