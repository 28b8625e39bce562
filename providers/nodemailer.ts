/**
 * Nodemailer: the default sign-in message over SMTP. `server` is a connection URL
 * (`smtp://user:pass@smtp.example.com:587`) or Nodemailer's transport options. Nodemailer is an
 * optional peer dependency (`npm install nodemailer`), loaded when the first message is sent.
 *
 * @module
 */
import { AuthError } from '../core/errors.js'
import { DEFAULT_FROM, emailProvider, type EmailConfig, type EmailUserConfig } from '../core/email/provider.js'
import { sendWithNodemailer } from '../core/email/smtp.js'

export type { EmailConfig, EmailUserConfig }

/**
 * Creates the Nodemailer provider (id `nodemailer`).
 *
 * @example
 * ```ts
 * Nodemailer({ server: process.env.EMAIL_SERVER, from: 'Example <no-reply@example.com>' })
 * ```
 * @throws {AuthError} when `server` is missing, as Auth.js does.
 */
export default function Nodemailer(options: EmailUserConfig): EmailConfig {
  if (!options?.server) throw new AuthError('Nodemailer requires a `server` configuration')
  return emailProvider(
    {
      id: 'nodemailer',
      type: 'email',
      name: 'Nodemailer',
      server: { host: 'localhost', port: 25, auth: { user: '', pass: '' } },
      from: DEFAULT_FROM,
      sendVerificationRequest: sendWithNodemailer,
    },
    options,
  )
}
