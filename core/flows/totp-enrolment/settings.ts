/**
 * The signed-in user's two-step settings (`{basePath}/two-factor`): on or off, and turning it
 * off. Part of the second-factor module: reached only through `secondFactor: totp()`.
 *
 * @module
 */
import { notifyLifecycle } from '../../observe/notify.js'
import type { RequestContext } from '../../config/types.js'
import { STEP_PAGE_HEADERS } from '../../http/steps.js'
import { renderBackupCodesPage, renderTwoFactorPage } from '../../pages/steps.js'
import { enrolledFactors, removeSecondFactors } from '../../second-factor/stored.js'
import { signedInUser } from '../../session/current.js'
import type { ResponseInternal } from '../../types.js'

/** `GET /two-factor`: a signed-in user's two-step settings; others sign in first. */
export async function respondTwoFactorPage(ctx: RequestContext): Promise<ResponseInternal> {
  const user = await signedInUser(ctx)
  if (!user) return signInFirst(ctx)
  const factors = await enrolledFactors(ctx.config.adapter, user.id)
  const codes = factors.find((f) => f.type === 'backup-codes')
  const page = renderTwoFactorPage(ctx.config.theme, {
    enrolled: factors.some((f) => f.type === 'totp'),
    backupCodesLeft: codes ? codes.secret.split(' ').filter(Boolean).length : 0,
    action: `${ctx.authUrl}/two-factor`,
    csrfToken: ctx.csrf!.token,
  })
  return { status: page.status, headers: STEP_PAGE_HEADERS, body: page.html, cookies: ctx.setCookies }
}

/** Sends a signed-out user to sign in, and back to the two-step settings after. */
function signInFirst(ctx: RequestContext): ResponseInternal {
  const back = new URLSearchParams({ callbackUrl: `${ctx.authUrl}/two-factor` })
  return { redirect: `${ctx.authUrl}/signin?${back}`, cookies: ctx.setCookies }
}

/**
 * `POST /two-factor`: with `action=disable`, turns two-step verification off for the signed-in
 * user (the session says who: nothing in the body names a user or a factor) and goes back to the
 * settings page; otherwise enrolment starts (signed-in users only).
 */
export async function twoFactorAction(ctx: RequestContext, params: unknown): Promise<ResponseInternal | undefined> {
  const user = await signedInUser(ctx)
  if (!user) return signInFirst(ctx)
  if ((params as { action?: unknown }).action !== 'disable') return undefined
  const removed = await removeSecondFactors(ctx.config.adapter, user.id)
  if (removed > 0 && ctx.config.observers.length > 0) notifyLifecycle(ctx, 'second-factor-removed', { userId: user.id })
  return { redirect: `${ctx.authUrl}/two-factor`, cookies: ctx.setCookies }
}

/** The page a finished enrolment ends with: the backup codes, shown once. */
export function respondBackupCodesPage(ctx: RequestContext, data: Record<string, unknown>): ResponseInternal {
  const page = renderBackupCodesPage(ctx.config.theme, data.codes as string[], String(data.continueUrl ?? ctx.origin))
  return { status: page.status, headers: STEP_PAGE_HEADERS, body: page.html, cookies: ctx.setCookies }
}
