/**
 * Forward Email: the default sign-in message through `POST https://api.forwardemail.net/v1/emails`,
 * with HTTP Basic `<key>:` (`apiKey`, else `AUTH_FORWARDEMAIL_KEY`).
 *
 * @module
 */
import { apiEmailProvider, postToApi, type EmailConfig, type EmailUserConfig } from '../core/email/provider.js'

export type { EmailConfig, EmailUserConfig }

const forwardEmail = apiEmailProvider({ id: 'forwardemail', name: 'Forward Email' }, (params, { to, from, subject, html, text }) =>
  postToApi('Forward Email', params, 'https://api.forwardemail.net/v1/emails', {
    headers: { Authorization: `Basic ${btoa(`${params.provider.apiKey}:`)}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ from, to, subject, html, text }),
  }),
)

/**
 * Creates the Forward Email provider (id `forwardemail`).
 *
 * @example
 * ```ts
 * ForwardEmail({ from: 'no-reply@example.com' }) // key from AUTH_FORWARDEMAIL_KEY
 * ```
 */
export default function ForwardEmail(options: EmailUserConfig = {}): EmailConfig {
  return forwardEmail(options)
}
