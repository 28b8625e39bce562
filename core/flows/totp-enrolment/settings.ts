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
import { BACKUP_CODE_COUNT, createBackupCodes, hashBackupCode, replaceBackupCodes } from '../../second-factor/index.js'
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
    confirmingDisable: ctx.request.query.confirm === 'disable',
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
 * settings page; with `action=regenerate-backup-codes`, replaces the user's backup codes and shows
 * the new ones once; otherwise enrolment starts (signed-in users only).
 */
export async function twoFactorAction(ctx: RequestContext, params: unknown): Promise<ResponseInternal | undefined> {
  const user = await signedInUser(ctx)
  if (!user) return signInFirst(ctx)
  const { action } = params as { action?: unknown }
  if (action === 'regenerate-backup-codes') return regenerateBackupCodes(ctx, user.id)
  if (action !== 'disable') return undefined
  const removed = await removeSecondFactors(ctx.config.adapter, user.id)
  if (removed > 0 && ctx.config.observers.length > 0) notifyLifecycle(ctx, 'second-factor-removed', { userId: user.id })
  return { redirect: `${ctx.authUrl}/two-factor`, cookies: ctx.setCookies }
}

/**
 * New backup codes for a user with a second factor: the old ones stop working at once (the stored
 * hashes are replaced, never added to). A user without one has no codes to replace: back to the
 * settings page.
 */
async function regenerateBackupCodes(ctx: RequestContext, userId: string): Promise<ResponseInternal> {
  const adapter = ctx.config.adapter!
  const factors = await enrolledFactors(adapter, userId)
  const totp = factors.find((f) => f.type === 'totp')
  if (!totp) return { redirect: `${ctx.authUrl}/two-factor`, cookies: ctx.setCookies }
  const codes = createBackupCodes(BACKUP_CODE_COUNT)
  const secret = (await Promise.all(codes.map((code) => hashBackupCode(code, ctx.config.secrets[0])))).join(' ')
  const stored = factors.find((f) => f.type === 'backup-codes')
  if (stored) await replaceBackupCodes(adapter, ctx.config.store, stored, secret)
  else await adapter.createSecondFactor!({ id: `${totp.id}:backup-codes`, userId, type: 'backup-codes', secret, createdAt: new Date(ctx.at * 1000) })
  const page = renderBackupCodesPage(ctx.config.theme, codes, `${ctx.authUrl}/two-factor`, 'New backup codes')
  return { status: page.status, headers: STEP_PAGE_HEADERS, body: page.html, cookies: ctx.setCookies }
}

/** The page a finished enrolment ends with: the backup codes, shown once. */
export function respondBackupCodesPage(ctx: RequestContext, data: Record<string, unknown>): ResponseInternal {
  const page = renderBackupCodesPage(ctx.config.theme, data.codes as string[], String(data.continueUrl ?? ctx.origin))
  return { status: page.status, headers: STEP_PAGE_HEADERS, body: page.html, cookies: ctx.setCookies }
}
