/**
 * Mailgun: the default sign-in message through `POST https://api.mailgun.net/v3/<domain>/messages`
 * (`region: 'EU'` uses `api.eu.mailgun.net`) as a multipart form, with HTTP Basic `api:<key>`
 * (`apiKey`, else `AUTH_MAILGUN_KEY`). The sending domain is the domain of `from`.
 *
 * @module
 */
import { apiEmailProvider, postToApi, type EmailConfig, type EmailUserConfig } from '../core/email/provider.js'

export type { EmailConfig, EmailUserConfig }

/** Options of {@link MailGun}. */
export interface MailgunUserConfig extends EmailUserConfig {
  /** Mailgun's region: `US` (default) or `EU`. */
  region?: 'US' | 'EU'
}

const API_SERVERS = { US: 'api.mailgun.net', EU: 'api.eu.mailgun.net' } as const

/**
 * `from` as Mailgun wants it, and its domain. Auth.js writes `<name> <from>`; a `from` that already
 * names its sender (`Example <no-reply@example.com>`, as the default does) is kept as it is.
 */
function sender(provider: EmailConfig): { from: string; domain: string | undefined } {
  const given = provider.from ?? ''
  const bracketed = /<([^<>]+)>\s*$/.exec(given)
  const address = bracketed ? bracketed[1]! : given
  return {
    from: bracketed ? given : `${provider.name} <${given}>`,
    domain: address.split('@').at(1),
  }
}

const mailgun = apiEmailProvider({ id: 'mailgun', name: 'Mailgun' }, async (params, message) => {
  const { provider } = params
  const { from, domain } = sender(provider)
  // As Auth.js: the sending domain is the domain of `from`.
  if (!domain) throw new Error('malformed Mailgun domain')
  const form = new FormData()
  form.append('from', from)
  form.append('to', message.to)
  form.append('subject', message.subject)
  form.append('html', message.html)
  form.append('text', message.text)
  const region = provider.region === 'EU' ? 'EU' : 'US'
  await postToApi('Mailgun', params, `https://${API_SERVERS[region]}/v3/${domain}/messages`, {
    headers: { Authorization: `Basic ${btoa(`api:${provider.apiKey}`)}` },
    body: form,
  })
})

/**
 * Creates the Mailgun provider (id `mailgun`).
 *
 * @example
 * ```ts
 * MailGun({ from: 'no-reply@mg.example.com', region: 'EU' }) // key from AUTH_MAILGUN_KEY
 * ```
 */
export default function MailGun(options: MailgunUserConfig = {}): EmailConfig {
  return mailgun(options)
}
