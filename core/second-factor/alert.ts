/**
 * The notice to a user whose second-factor codes someone is spending: once per counting window, an
 * e-mail to the address the adapter stores for the user (never one a session or a request names),
 * through the configured e-mail provider. Without an e-mail provider, an adapter that reads users,
 * or a stored address, nothing is sent; the step page still says it to whoever is paused. Loaded
 * by the sign-in completion only when the notice is due.
 *
 * @module
 */
import type { EmailConfig, EmailNotice } from '../email/types.js'
import type { RequestContext } from '../config/types.js'
import { randomHex } from '../crypto.js'

/** The notice's text, for the account at `host`. */
export function codesTriedNotice(host: string): EmailNotice {
  return {
    kind: 'second-factor-codes-tried',
    subject: `Someone is trying two-step verification codes for your account at ${host}`,
    text:
      `Someone who knows your password for ${host} has entered several wrong two-step verification codes in the last few minutes.\n\n` +
      'If this was you, there is nothing to do. If it was not, change your password now: your codes kept them out, and new codes from their address are paused. ' +
      'You can still sign in with your authenticator app from a device you used before, with a passkey, or with one of your backup codes.',
  }
}

/**
 * E-mails the owner of `userId` that someone is trying codes, if an e-mail provider is
 * configured and the adapter holds the user's address. A failed send is logged, never thrown.
 */
export async function sendCodesTriedNotice(ctx: RequestContext, userId: string): Promise<void> {
  ctx.logger.warn('second-factor-codes-tried')
  const provider = ctx.config.providers.find((p) => p.type === 'email' && p.email)
  const email = provider ? (await ctx.config.adapter?.getUser?.(userId))?.email : undefined
  if (!provider || !email) return
  const config = provider.config as unknown as EmailConfig
  try {
    await config.sendVerificationRequest({
      identifier: email,
      url: `${ctx.authUrl}/signin`,
      // Required by the sender's signature; it is stored nowhere and signs no one in.
      token: randomHex(16),
      expires: new Date((ctx.at + 15 * 60) * 1000),
      provider: config,
      theme: ctx.config.theme,
      request: ctx.raw,
      notice: codesTriedNotice(new URL(ctx.authUrl).host),
    })
  } catch {
    // The sender's error is not quoted: a custom sender may quote its input.
    ctx.logger.error(new Error('The notice that someone is trying two-step verification codes could not be sent'))
  }
}
