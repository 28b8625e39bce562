/**
 * What the re-authentication page shows: the action named, the factors offered, the credentials
 * form's fields. Only to the signed-in user the flow belongs to.
 *
 * @module
 */
import type { ReauthenticateContext } from '../../../machines/reauthenticate.logic.js'
import type { RequestContext } from '../../config/types.js'
import type { CredentialField } from '../../pages/reauthenticate.js'
import { signedInUser } from '../../session/current.js'
import { passwordProvider, storedAddressOf } from './chart.js'
import { actionLabelOf } from './policy.js'

/** The credentials provider's fields, as its sign-in form asks for them. */
function credentialFields(ctx: RequestContext): CredentialField[] {
  const declared = (passwordProvider(ctx)?.config.credentials ?? {}) as Record<string, { label?: unknown; type?: unknown } | undefined>
  return Object.entries(declared).map(([name, input]) => ({
    name,
    label: typeof input?.label === 'string' ? input.label : name.charAt(0).toUpperCase() + name.slice(1),
    type: typeof input?.type === 'string' ? input.type : 'text',
  }))
}

/** `alice@example.com` → `a***@example.com`: enough to recognise, not to harvest. */
function maskEmail(email: string): string {
  const at = email.lastIndexOf('@')
  return at <= 0 ? '***' : `${email[0]}***${email.slice(at)}`
}

/** The page's data; `null` when the request is not the flow's user signed in. */
export async function reauthenticationPageData(
  ctx: RequestContext,
  context: ReauthenticateContext,
): Promise<Record<string, unknown> | null> {
  const user = await signedInUser(ctx)
  if (!user || user.id !== context.userId) return null
  const address = context.factors.includes('email') ? await storedAddressOf(ctx, context.userId) : null
  return {
    actionLabel: actionLabelOf(context.action, context.intent.fields),
    factors: context.factors,
    credentialFields: context.factors.includes('pwd') ? credentialFields(ctx) : [],
    providers: context.factors.includes('fed') ? (context.providers ?? []) : [],
    emailSent: context.emailSent === true,
    maskedEmail: address ? maskEmail(address) : null,
  }
}
