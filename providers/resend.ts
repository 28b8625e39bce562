/**
 * Resend: the default sign-in message through `POST https://api.resend.com/emails`, with the API key
 * (`apiKey`, else `AUTH_RESEND_KEY`) as a bearer token.
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

/** Sends through Resend's Send Email endpoint. */
async function send(params: SendVerificationRequestParams): Promise<void> {
  const { to, from, subject, html, text } = renderMessage(params)
  await postToApi('Resend', params, 'https://api.resend.com/emails', {
    headers: { Authorization: `Bearer ${params.provider.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ from, to, subject, html, text }),
  })
}

/**
 * Creates the Resend provider (id `resend`).
 *
 * @example
 * ```ts
 * Resend({ from: 'Example <no-reply@example.com>' }) // key from AUTH_RESEND_KEY
 * ```
 */
export default function Resend(options: EmailUserConfig = {}): EmailConfig {
  return emailProvider(
    { id: 'resend', type: 'email', name: 'Resend', from: DEFAULT_FROM, usesApiKey: true, sendVerificationRequest: send },
    options,
  )
}
