/**
 * Postmark: the default sign-in message through `POST https://api.postmarkapp.com/email` on the
 * `outbound` message stream, with the server token (`apiKey`, else `AUTH_POSTMARK_KEY`) in
 * `X-Postmark-Server-Token`.
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

/**
 * Sends through Postmark's single-email endpoint.
 *
 * @throws {TypeError} when no server token is configured, as Auth.js does.
 */
async function send(params: SendVerificationRequestParams): Promise<void> {
  const { apiKey } = params.provider
  if (!apiKey) throw new TypeError('Missing Postmark API Key')
  const { to, from, subject, html, text } = renderMessage(params)
  await postToApi('Postmark', params, 'https://api.postmarkapp.com/email', {
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'X-Postmark-Server-Token': apiKey },
    body: JSON.stringify({ From: from, To: to, Subject: subject, TextBody: text, HtmlBody: html, MessageStream: 'outbound' }),
  })
}

/**
 * Creates the Postmark provider (id `postmark`).
 *
 * @example
 * ```ts
 * Postmark({ from: 'no-reply@example.com' }) // token from AUTH_POSTMARK_KEY
 * ```
 */
export default function Postmark(options: EmailUserConfig = {}): EmailConfig {
  return emailProvider(
    { id: 'postmark', type: 'email', name: 'Postmark', from: DEFAULT_FROM, usesApiKey: true, sendVerificationRequest: send },
    options,
  )
}
