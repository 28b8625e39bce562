/**
 * The user's side of the device authorization grant, at `{basePath}/device`:
 *
 * - `GET` (and `?user_code=`, the link the device shows): signed in only (else to the sign-in
 *   page and back); the user enters or confirms the code, and is shown which client asks, for
 *   which scopes, and when and from where the request was made;
 * - `POST` (CSRF-checked; approving is the sensitive action `approve-device`, so a stale session
 *   proves a factor again first) with `action` approve or deny and the `user_code`.
 *
 * Every code entered, shown or answered, is counted per user and per address in the shared
 * store; a wrong code names nothing of any other. Like every built-in page, it may not be framed
 * (`frame-ancestors 'none'`, `X-Frame-Options: DENY`) nor cached.
 *
 * @module
 */
import { DEVICE_AUTHORIZATION } from '../../machines/device-authorization.logic.js'
import type { RequestContext } from '../config/types.js'
import { advanceNow } from '../engine/advance.js'
import { HTML_NO_STORE_HEADERS } from '../http/handlers.js'
import { notifyLifecycle, notifyRun, observedRunOptions } from '../observe/notify.js'
import { escapeHtml, hiddenCsrf } from '../pages/html.js'
import { errorBox, renderCard } from '../pages/index.js'
import { currentSession } from '../session/current.js'
import type { ResponseInternal } from '../types.js'
import { codeKey, normalizeUserCode } from './codes.js'
import { admitUserCodeAttempt, deviceAuthorizationFlow, pendingRequestOf } from './flow.js'
import type { StoredDeviceRequest } from './types.js'

const WRONG_CODE = 'That code is not valid, or it has expired. Check the code on your device and try again.'

const typedCode = (value: unknown): string => (typeof value === 'string' ? value.slice(0, 32) : '')
/** A normalised user code as the device shows it: `XXXX-XXXX`. */
const shown = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`
const pageUrl = (ctx: RequestContext, code?: string) =>
  `${ctx.authUrl}/device${code ? `?${new URLSearchParams({ user_code: code })}` : ''}`

function page(ctx: RequestContext, content: string, status = 200, headers: Record<string, string> = {}): ResponseInternal {
  // The page's URL may hold a user code: out of caches and out of any Referer header.
  return {
    status,
    headers: { ...HTML_NO_STORE_HEADERS, 'Referrer-Policy': 'no-referrer', ...headers },
    body: renderCard('Sign in a device', ctx.config.theme, content),
    cookies: ctx.setCookies,
  }
}

/** The sign-in page, coming back to `url` after it. */
function signInThenBack(ctx: RequestContext, url: string): ResponseInternal {
  const signIn = ctx.config.pages.signIn ?? `${ctx.authUrl}/signin`
  return { redirect: `${signIn}${signIn.includes('?') ? '&' : '?'}${new URLSearchParams({ callbackUrl: url })}`, cookies: ctx.setCookies }
}

/** The form where the user types the code their device shows. */
function entryPage(ctx: RequestContext, message?: string, status = 200, headers: Record<string, string> = {}): ResponseInternal {
  return page(
    ctx,
    '<h1>Sign in a device</h1>' +
      (message ? errorBox(message) : '') +
      `<form action="${escapeHtml(`${ctx.authUrl}/device`)}" method="GET">` +
      '<label class="section-header" for="input-user-code">Enter the code shown on your device</label>' +
      '<input id="input-user-code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="12" placeholder="XXXX-XXXX" autofocus required>' +
      '<button id="continueButton" type="submit">Continue</button></form>',
    status,
    headers,
  )
}

const retryHeaders = (retryAfter: number) => ({ 'Retry-After': String(retryAfter) })
const limitedMessage = (retryAfter: number) => `Too many codes were entered. Try again in ${Math.max(1, Math.ceil(retryAfter / 60))} minutes.`

/** The confirmation: what asks, for what, from where; Approve and Deny post back with the CSRF token. */
function confirmPage(ctx: RequestContext, code: string, request: StoredDeviceRequest, who: string): ResponseInternal {
  const client = ctx.config.deviceAuthorization!.options.clients.get(request.clientId)
  const scopes = request.scope ? request.scope.split(' ') : []
  const form = (action: 'approve' | 'deny', label: string) =>
    // The code rides in the form's URL too: a stale session sent to sign in again comes back to this page.
    `<form action="${escapeHtml(pageUrl(ctx, code))}" method="POST">${hiddenCsrf(ctx.csrf!.token)}` +
    `<input type="hidden" name="action" value="${action}"><input type="hidden" name="user_code" value="${escapeHtml(code)}">` +
    `<button id="${action}Button" type="submit"><span>${label}</span></button></form>`
  const asked = new Date(request.createdAt * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')
  return page(
    ctx,
    `<h1>Sign in ${escapeHtml(client?.name ?? request.clientId)}?</h1>` +
      `<p>A device asks to be signed in as <strong class="address">${escapeHtml(who)}</strong> with the code <strong class="user-code">${escapeHtml(code)}</strong>.</p>` +
      `<dl class="device-request"><dt>Access</dt><dd class="scopes">${scopes.length > 0 ? scopes.map((scope) => `<code>${escapeHtml(scope)}</code>`).join(' ') : 'Your account'}</dd>` +
      `<dt>Asked</dt><dd class="asked-at">${escapeHtml(asked)}</dd>` +
      `<dt>From</dt><dd class="asked-from">${escapeHtml(request.address ?? 'an unknown address')}</dd>` +
      `<dt>Device</dt><dd class="asked-by">${escapeHtml(request.userAgent ?? 'unknown')}</dd></dl>` +
      '<p>Approve only if you started this on a device of yours just now.</p>' +
      form('approve', 'Approve') +
      form('deny', 'Deny'),
  )
}

/** `GET {basePath}/device`: the code form, or with `?user_code=` the request it names to approve or deny. */
export async function serveDevicePage(ctx: RequestContext): Promise<ResponseInternal> {
  const typed = typedCode(ctx.request.query.user_code)
  const current = await currentSession(ctx)
  if (!current) return signInThenBack(ctx, pageUrl(ctx, typed))
  if (typed === '') return entryPage(ctx)
  const admission = await admitUserCodeAttempt(ctx, current.user.id)
  if (!admission.allowed) return entryPage(ctx, limitedMessage(admission.retryAfter), 429, retryHeaders(admission.retryAfter))
  const code = normalizeUserCode(typed)
  const found = code === null ? null : await pendingRequestOf(ctx, await codeKey(ctx.config.secrets[0], 'user', code))
  if (!found) return entryPage(ctx, WRONG_CODE, 400)
  return confirmPage(ctx, shown(code!), found.request, current.user.email ?? current.user.name ?? current.user.id)
}

/** `POST {basePath}/device`: the signed-in user's answer, approve or deny, to the code they entered. */
export async function serveDeviceAnswer(ctx: RequestContext): Promise<ResponseInternal> {
  const body = ctx.request.body ?? {}
  // A post resumed after a re-authentication replays no field named like a code: the code rides in the form's URL too.
  const typed = typedCode(body.user_code ?? ctx.request.query.user_code)
  const current = await currentSession(ctx)
  if (!current) return signInThenBack(ctx, pageUrl(ctx, typed))
  const action = body.action
  if (action !== 'approve' && action !== 'deny') return entryPage(ctx, 'Choose to approve or deny the request.', 400)
  const code = normalizeUserCode(typed)
  // A malformed code is counted like a wrong one: its hash names nothing.
  const key = await codeKey(ctx.config.secrets[0], 'user', code ?? `malformed:${typed}`)
  const event = { type: `device.${action}`, at: ctx.at, userId: current.user.id, codeKey: key }
  const run = await advanceNow(deviceAuthorizationFlow, ctx, event, observedRunOptions(ctx))
  notifyRun(ctx, DEVICE_AUTHORIZATION, run)
  const state = String(run.snapshot.value)
  const outcome = run.outcome as { body?: { retryAfter?: number } }
  if (state === 'approved') {
    if (ctx.config.observers.length > 0) notifyLifecycle(ctx, 'device-authorization-approved', { userId: current.user.id })
    return page(ctx, '<h1>Device signed in</h1><p class="device-approved">You can go back to your device: it is signed in as you.</p>')
  }
  if (state === 'denied') {
    if (ctx.config.observers.length > 0) notifyLifecycle(ctx, 'device-authorization-denied', { userId: current.user.id })
    return page(ctx, '<h1>Request denied</h1><p class="device-denied">The device was not signed in.</p>')
  }
  if (state === 'limited') {
    const retryAfter = outcome.body?.retryAfter ?? 60
    return entryPage(ctx, limitedMessage(retryAfter), 429, retryHeaders(retryAfter))
  }
  if (state === 'refused') return entryPage(ctx, WRONG_CODE, 400)
  const retryAfter = ctx.config.availability.retryAfter
  return page(ctx, '<h1>Try again later</h1><p>The request could not be answered just now. Nothing was approved.</p>', 503, retryHeaders(retryAfter))
}
