/**
 * The one function every message of the password flows goes through: the address verification,
 * the reset link and the notice to an owner whose address someone tried to sign up with. A
 * sender's error is logged with the link and token scrubbed from it, never thrown to the browser.
 *
 * @module
 */
import type { RequestContext, ResolvedProvider } from '../../config/types.js'
import type { EmailConfig } from '../../email/provider.js'
import { EmailSignInError } from '../../errors.js'
import type { PasswordConfig, PasswordMail, PasswordMailKind, PasswordSender } from './options.js'

const SUBJECTS: Record<PasswordMailKind, string> = {
  verify: 'Confirm your e-mail address',
  reset: 'Reset your password',
  'reset-unknown': 'Reset your password',
  'signup-existing': 'Someone tried to sign up with your address',
}

const TEXTS: Record<PasswordMailKind, (url: string, host: string) => string> = {
  verify: (url, host) => `Confirm your address to finish signing up to ${host}:\n${url}\n\nIf you did not sign up, ignore this message.\n`,
  reset: (url, host) => `Reset your password for ${host} (the link works once, for 15 minutes):\n${url}\n\nIf you did not ask, ignore this message: your password is unchanged.\n`,
  'reset-unknown': (url, host) =>
    `Someone asked to reset the password of an account at ${host} with this address, but it has none. If it was you, you may sign up:\n${url}\n\nIf it was not, ignore this message.\n`,
  'signup-existing': (url, host) =>
    `Someone tried to sign up to ${host} with this address, which already has an account. If it was you, sign in, or reset your password:\n${url}\n\nIf it was not, ignore this message: nothing changed.\n`,
}

/** The application's sender for `kind`, else its `send`, else the configured e-mail provider's transport. */
function senderOf(ctx: RequestContext, provider: PasswordConfig, kind: PasswordMailKind): PasswordSender {
  const own = (kind === 'verify' ? provider.sendVerification : kind === 'reset' || kind === 'reset-unknown' ? provider.sendReset : undefined) ?? provider.send
  if (own) return own
  const email = ctx.config.providers.find((candidate: ResolvedProvider) => candidate.type === 'email')
  if (!email) throw new TypeError('the password provider has no way to send e-mail: give it `send`, or configure an e-mail provider')
  const config = email.config as unknown as EmailConfig
  return (mail) =>
    config.sendVerificationRequest({
      identifier: mail.to,
      url: mail.url,
      token: mail.token ?? '',
      expires: new Date((ctx.at + 900) * 1000),
      provider: config,
      theme: ctx.config.theme,
      request: mail.request,
    })
}

/** An error as a sender threw it, with every line that quoted a secret scrubbed. */
function scrubbed(error: unknown, secrets: readonly (string | undefined)[]): Error {
  const scrub = (text: string) => secrets.reduce<string>((out, secret) => (secret ? out.split(secret).join('[redacted]') : out), text)
  const original = error instanceof Error ? error : new Error(String(error))
  const copy = new Error(scrub(original.message))
  copy.name = original.name
  copy.stack = original.stack ? scrub(original.stack) : copy.stack
  return copy
}

/**
 * Sends one message of the password flows to `to`. Every message goes through here (so one limit
 * per recipient can be applied in one place).
 *
 * @returns whether it was sent; a failure is logged (scrubbed) and is the caller's to answer
 *   exactly as a success, so that a failing address tells a requester nothing.
 */
export async function sendPasswordMail(
  ctx: RequestContext,
  provider: PasswordConfig,
  message: { kind: PasswordMailKind; to: string; url: string; token?: string },
): Promise<boolean> {
  const host = new URL(ctx.authUrl).host
  const mail: PasswordMail = {
    kind: message.kind,
    to: message.to,
    subject: SUBJECTS[message.kind],
    text: TEXTS[message.kind](message.url, host),
    url: message.url,
    ...(message.token !== undefined ? { token: message.token } : {}),
    request: ctx.raw,
  }
  try {
    await senderOf(ctx, provider, message.kind)(mail)
    return true
  } catch (error) {
    ctx.logger.error(new EmailSignInError(scrubbed(error, [message.url, message.token])))
    return false
  }
}
