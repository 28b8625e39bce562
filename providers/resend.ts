/**
 * Resend: the default sign-in message through `POST https://api.resend.com/emails`, with the API key
 * (`apiKey`, else `AUTH_RESEND_KEY`) as a bearer token.
 *
 * @module
 */
import { apiEmailProvider, postToApi, type EmailConfig, type EmailUserConfig } from '../core/email/provider.js'

export type { EmailConfig, EmailUserConfig }

const resend = apiEmailProvider({ id: 'resend', name: 'Resend' }, (params, { to, from, subject, html, text }) =>
  postToApi('Resend', params, 'https://api.resend.com/emails', {
    headers: { Authorization: `Bearer ${params.provider.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ from, to, subject, html, text }),
  }),
)

/**
 * Creates the Resend provider (id `resend`).
 *
 * @example
 * ```ts
 * Resend({ from: 'Example <no-reply@example.com>' }) // key from AUTH_RESEND_KEY
 * ```
 */
export default function Resend(options: EmailUserConfig = {}): EmailConfig {
  return resend(options)
}
