/**
 * Postmark: the default sign-in message through `POST https://api.postmarkapp.com/email` on the
 * `outbound` message stream, with the server token (`apiKey`, else `AUTH_POSTMARK_KEY`) in
 * `X-Postmark-Server-Token`.
 *
 * @module
 */
import { apiEmailProvider, postToApi, type EmailConfig, type EmailUserConfig } from '../core/email/provider.js'

export type { EmailConfig, EmailUserConfig }

const postmark = apiEmailProvider({ id: 'postmark', name: 'Postmark' }, async (params, message) => {
  const { apiKey } = params.provider
  // As Auth.js: no request at all without a server token.
  if (!apiKey) throw new TypeError('Missing Postmark API Key')
  const { to, from, subject, html, text } = message
  await postToApi('Postmark', params, 'https://api.postmarkapp.com/email', {
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'X-Postmark-Server-Token': apiKey },
    body: JSON.stringify({ From: from, To: to, Subject: subject, TextBody: text, HtmlBody: html, MessageStream: 'outbound' }),
  })
})

/**
 * Creates the Postmark provider (id `postmark`).
 *
 * @example
 * ```ts
 * Postmark({ from: 'no-reply@example.com' }) // token from AUTH_POSTMARK_KEY
 * ```
 */
export default function Postmark(options: EmailUserConfig = {}): EmailConfig {
  return postmark(options)
}
