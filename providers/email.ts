/**
 * The generic e-mail provider (magic links, and one-time codes on request): give it a
 * `sendVerificationRequest` of your own, or an SMTP `server` to send the default message through
 * Nodemailer, as Auth.js's `Email` does. Every other e-mail provider is this one with a sender.
 *
 * @module
 */
import { AuthError } from '../core/errors.js'
import {
  DEFAULT_FROM,
  emailProvider,
  type EmailCodeOptions,
  type EmailConfig,
  type EmailThrottleOptions,
  type EmailUserConfig,
  type SendVerificationRequest,
  type SendVerificationRequestParams,
} from '../core/email/provider.js'
import { html, text } from '../core/email/message.js'
import { sendWithNodemailer } from '../core/email/smtp.js'

export type {
  EmailCodeOptions,
  EmailConfig,
  EmailThrottleOptions,
  EmailUserConfig,
  SendVerificationRequest,
  SendVerificationRequestParams,
}
/** The default message, for senders of your own: `html({ url, host, theme, code })`, `text(…)`. */
export { html, text }

/**
 * Creates an e-mail provider (id `email`).
 *
 * @example
 * ```ts
 * Email({
 *   from: 'Example <no-reply@example.com>',
 *   code: true, // also send a one-time code
 *   async sendVerificationRequest({ identifier, url, code }) {
 *     await mailer.send({ to: identifier, subject: 'Sign in', text: `${url}\n${code}` })
 *   },
 * })
 * ```
 * @throws {AuthError} when neither `sendVerificationRequest` nor an SMTP `server` is given.
 */
export default function Email(options: EmailUserConfig = {}): EmailConfig {
  if (!options.sendVerificationRequest && !options.server) {
    throw new AuthError('Email requires a `sendVerificationRequest` function or a `server` configuration')
  }
  return emailProvider(
    {
      id: 'email',
      type: 'email',
      name: 'Email',
      from: DEFAULT_FROM,
      sendVerificationRequest: sendWithNodemailer,
    },
    options,
  )
}
