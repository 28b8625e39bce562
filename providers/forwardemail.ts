/**
 * Forward Email: the default sign-in message through `POST https://api.forwardemail.net/v1/emails`,
 * with HTTP Basic `<key>:` (`apiKey`, else `AUTH_FORWARDEMAIL_KEY`).
 *
 * @module
 */
import {
  DEFAULT_FROM,
  emailProvider,
  postToApi,
  renderMessage,
  type EmailConfig,
  type EmailUserConfig,
  type SendVerificationRequestParams,
} from '../core/email/provider.js'

export type { EmailConfig, EmailUserConfig }

/** Sends through Forward Email's outbound SMTP API. */
async function send(params: SendVerificationRequestParams): Promise<void> {
  const { to, from, subject, html, text } = renderMessage(params)
  await postToApi('Forward Email', params, 'https://api.forwardemail.net/v1/emails', {
    headers: { Authorization: `Basic ${btoa(`${params.provider.apiKey}:`)}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ from, to, subject, html, text }),
  })
}

/**
 * Creates the Forward Email provider (id `forwardemail`).
 *
 * @example
 * ```ts
 * ForwardEmail({ from: 'no-reply@example.com' }) // key from AUTH_FORWARDEMAIL_KEY
 * ```
 */
export default function ForwardEmail(options: EmailUserConfig = {}): EmailConfig {
  return emailProvider(
    {
      id: 'forwardemail',
      type: 'email',
      name: 'Forward Email',
      from: DEFAULT_FROM,
      usesApiKey: true,
      sendVerificationRequest: send,
    },
    options,
  )
}
