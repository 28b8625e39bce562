/**
 * SendGrid: the default sign-in message through `POST https://api.sendgrid.com/v3/mail/send` (v3
 * Mail Send), with the API key (`apiKey`, else `AUTH_SENDGRID_KEY`) as a bearer token.
 *
 * @module
 */
import { apiEmailProvider, postToApi, type EmailConfig, type EmailUserConfig } from '../core/email/provider.js'

export type { EmailConfig, EmailUserConfig }

const sendgrid = apiEmailProvider({ id: 'sendgrid', name: 'SendGrid' }, (params, { to, from, subject, html, text }) =>
  postToApi('Sendgrid', params, 'https://api.sendgrid.com/v3/mail/send', {
    headers: { Authorization: `Bearer ${params.provider.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      personalizations: [{ to: [{ email: to }] }],
      from: { email: from },
      subject,
      content: [
        { type: 'text/plain', value: text },
        { type: 'text/html', value: html },
      ],
    }),
  }),
)

/**
 * Creates the SendGrid provider (id `sendgrid`).
 *
 * @example
 * ```ts
 * SendGrid({ from: 'no-reply@example.com' }) // key from AUTH_SENDGRID_KEY
 * ```
 */
export default function SendGrid(options: EmailUserConfig = {}): EmailConfig {
  return sendgrid(options)
}
