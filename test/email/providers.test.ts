/**
 * The HTTP e-mail providers against a local HTTP server standing in for each API: the exact
 * request each documented REST call makes (method, URL, headers, body), the API key from the
 * options or `AUTH_<ID>_KEY`, a refused send, and the default message, byte for byte Auth.js's.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { html as authjsHtml, text as authjsText } from '../../node_modules/@auth/core/lib/utils/email.js'
import { html, text } from '../../core/email/message.js'
import { customFetch } from '../../core/index.js'
import type { EmailConfig } from '../../core/email/provider.js'
import ForwardEmail from '../../providers/forwardemail.js'
import MailGun from '../../providers/mailgun.js'
import Postmark from '../../providers/postmark.js'
import Resend from '../../providers/resend.js'
import SendGrid from '../../providers/sendgrid.js'
import { ORIGIN, setCookie } from '../fixtures/http.js'
import { emailConfig, EmailClient } from './helpers.js'

interface Received {
  /** The URL the provider asked for (before the stand-in took it). */
  url: string
  method: string
  headers: IncomingHttpHeaders
  body: Buffer
}

let server: Server
let standIn: string
const received: Received[] = []
let answer: { status: number; body: string } = { status: 200, body: '{"id":"msg-1"}' }

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({
        url: String(request.headers['x-requested-url']),
        method: request.method!,
        headers: request.headers,
        body: Buffer.concat(chunks),
      })
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  standIn = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
afterEach(() => {
  received.length = 0
  answer = { status: 200, body: '{"id":"msg-1"}' }
})

const realFetch = globalThis.fetch

/** Sends every request to the stand-in, noting the URL the provider meant. */
const toStandIn: typeof fetch = async (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input))
  const headers = new Headers(init?.headers)
  headers.set('x-requested-url', url.href)
  return realFetch(`${standIn}${url.pathname}`, { ...init, headers })
}

const withStandIn = (provider: EmailConfig) => Object.assign(provider, { [customFetch]: toStandIn })

/** Asks for a link with `provider`; returns the one request the API received. */
async function send(provider: EmailConfig): Promise<{ request: Received; response: Response; config: ReturnType<typeof emailConfig>['config'] }> {
  const { config } = emailConfig({ overrides: { providers: [withStandIn(provider)], theme: { brandColor: '#123456' } } })
  const response = await new EmailClient(config).requestLink('reader@example.com', {}, provider.id)
  return { request: received.at(-1)!, response, config }
}

const json = (request: Received) => JSON.parse(request.body.toString('utf8')) as Record<string, unknown>
const linkIn = (htmlBody: string) => new URL(/<a href="([^"]+)"/.exec(htmlBody)![1]!)

describe('Resend', () => {
  it('posts the message to /emails with a bearer key, and its link signs in', async () => {
    const provider = Resend({ apiKey: 're_test_key', from: 'Library <no-reply@library.test>' })
    const { request, response, config } = await send(provider)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/verify-request?provider=resend&type=email`)
    expect(received).toHaveLength(1)
    expect(request.url).toBe('https://api.resend.com/emails')
    expect(request.method).toBe('POST')
    expect(request.headers.authorization).toBe('Bearer re_test_key')
    expect(request.headers['content-type']).toBe('application/json')
    const body = json(request)
    expect(Object.keys(body)).toEqual(['from', 'to', 'subject', 'html', 'text'])
    expect(body).toMatchObject({ from: 'Library <no-reply@library.test>', to: 'reader@example.com', subject: 'Sign in to authchart.test' })
    const link = linkIn(String(body.html))
    expect(body.text).toBe(`Sign in to authchart.test\n${link.href}\n\n`)
    expect(body.html).toContain('bgcolor="#123456"')
    const signedIn = await new EmailClient(config).confirm(link)
    expect(setCookie(signedIn, '__Secure-authjs.session-token')).toBeDefined()
  })

  it('takes its key from AUTH_RESEND_KEY when the options have none', async () => {
    process.env.AUTH_RESEND_KEY = 're_from_env'
    try {
      const { request } = await send(Resend({ from: 'no-reply@library.test' }))
      expect(request.headers.authorization).toBe('Bearer re_from_env')
    } finally {
      delete process.env.AUTH_RESEND_KEY
    }
  })

  it('works passed uncalled (`providers: [Resend]`), its key from AUTH_RESEND_KEY, as in Auth.js', async () => {
    process.env.AUTH_RESEND_KEY = 're_uncalled'
    // An uncalled factory carries no customFetch: the global fetch goes to the stand-in instead.
    vi.stubGlobal('fetch', toStandIn)
    try {
      const { config } = emailConfig({ overrides: { providers: [Resend as never] } })
      const response = await new EmailClient(config).requestLink('reader@example.com', {}, 'resend')
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/verify-request?provider=resend&type=email`)
      expect(received.at(-1)!.url).toBe('https://api.resend.com/emails')
      expect(received.at(-1)!.headers.authorization).toBe('Bearer re_uncalled')
    } finally {
      vi.unstubAllGlobals()
      delete process.env.AUTH_RESEND_KEY
    }
  })

  it('fails the sign-in with EmailSignin when the API refuses, logging the reason without the link', async () => {
    answer = { status: 422, body: '' }
    const provider = withStandIn(Resend({ apiKey: 'k', from: 'no-reply@library.test' }))
    // An API that echoes the message back in its error must not put the token in the log.
    const echo: typeof fetch = async (input, init) => {
      const response = await toStandIn(input, init)
      const sent = JSON.parse(String(init?.body)) as { text: string }
      return new Response(`{"message":"invalid","echo":${JSON.stringify(sent.text)}}`, { status: response.status })
    }
    Object.assign(provider, { [customFetch]: echo })
    const { config } = emailConfig({ overrides: { providers: [provider] } })
    const response = await new EmailClient(config).requestLink('reader@example.com', {}, 'resend')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    const error = config.logger.error.mock.calls.at(-1)![0]
    expect(error.type).toBe('EmailSignInError')
    const logged = JSON.stringify([error.message, error.stack, error.cause?.err?.message, error.cause?.err?.stack])
    expect(logged).toContain('Resend error: 422')
    expect(logged).toContain('[redacted]')
    expect(logged).not.toMatch(/token=[0-9a-f]{64}/)
  })
})

describe('SendGrid', () => {
  it('posts v3 mail/send with personalizations and both contents', async () => {
    const { request } = await send(SendGrid({ apiKey: 'SG.key', from: 'no-reply@library.test' }))
    expect(request.url).toBe('https://api.sendgrid.com/v3/mail/send')
    expect(request.headers.authorization).toBe('Bearer SG.key')
    expect(request.headers['content-type']).toBe('application/json')
    const body = json(request) as { content: { type: string; value: string }[] }
    expect(body).toMatchObject({
      personalizations: [{ to: [{ email: 'reader@example.com' }] }],
      from: { email: 'no-reply@library.test' },
      subject: 'Sign in to authchart.test',
    })
    expect(body.content.map((c) => c.type)).toEqual(['text/plain', 'text/html'])
    expect(body.content[1]!.value).toContain('Sign in to <strong>authchart&#8203;.test</strong>')
  })
})

describe('Postmark', () => {
  it('posts /email on the outbound stream with the server token header', async () => {
    const { request } = await send(Postmark({ apiKey: 'pm-token', from: 'no-reply@library.test' }))
    expect(request.url).toBe('https://api.postmarkapp.com/email')
    expect(request.headers['x-postmark-server-token']).toBe('pm-token')
    expect(request.headers.accept).toBe('application/json')
    expect(request.headers['content-type']).toBe('application/json')
    const body = json(request)
    expect(Object.keys(body)).toEqual(['From', 'To', 'Subject', 'TextBody', 'HtmlBody', 'MessageStream'])
    expect(body).toMatchObject({ From: 'no-reply@library.test', To: 'reader@example.com', MessageStream: 'outbound' })
  })

  it('refuses to send without a server token (EmailSignin)', async () => {
    const { response } = await send(Postmark({ from: 'no-reply@library.test' }))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    expect(received).toHaveLength(0)
  })
})

describe('Mailgun', () => {
  it('posts a multipart form to /v3/<domain of from>/messages with Basic api:<key>', async () => {
    const { request } = await send(MailGun({ apiKey: 'mg-key', from: 'no-reply@mg.library.test' }))
    expect(request.url).toBe('https://api.mailgun.net/v3/mg.library.test/messages')
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('api:mg-key').toString('base64')}`)
    expect(request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/)
    const form = await new Request('http://form', {
      method: 'POST',
      headers: { 'content-type': String(request.headers['content-type']) },
      body: new Uint8Array(request.body),
    }).formData()
    expect([...form.keys()]).toEqual(['from', 'to', 'subject', 'html', 'text'])
    expect(form.get('from')).toBe('Mailgun <no-reply@mg.library.test>')
    expect(form.get('to')).toBe('reader@example.com')
    expect(form.get('subject')).toBe('Sign in to authchart.test')
  })

  it("uses the EU API for region 'EU', and keeps a from that names its sender", async () => {
    const { request } = await send(MailGun({ apiKey: 'k', region: 'EU', from: 'Library <no-reply@mg.library.test>' }))
    expect(request.url).toBe('https://api.eu.mailgun.net/v3/mg.library.test/messages')
  })
})

describe('Forward Email', () => {
  it('posts /v1/emails with Basic <key>:', async () => {
    const { request } = await send(ForwardEmail({ apiKey: 'fe-key', from: 'no-reply@library.test' }))
    expect(request.url).toBe('https://api.forwardemail.net/v1/emails')
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('fe-key:').toString('base64')}`)
    const body = json(request)
    expect(Object.keys(body)).toEqual(['from', 'to', 'subject', 'html', 'text'])
    expect(body).toMatchObject({ from: 'no-reply@library.test', to: 'reader@example.com' })
  })
})

describe('the default message', () => {
  it("is Auth.js's, byte for byte, when there is no code", () => {
    const url = `${ORIGIN}/auth/callback/email?callbackUrl=x&token=t&email=a%40b.c`
    for (const theme of [{}, { brandColor: '#ff0000', buttonText: '#000' }]) {
      expect(html({ url, host: 'authchart.test', theme })).toBe(authjsHtml({ url, host: 'authchart.test', theme }))
    }
    expect(text({ url, host: 'authchart.test' })).toBe(authjsText({ url, host: 'authchart.test' }))
  })
})
