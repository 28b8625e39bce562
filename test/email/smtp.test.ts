/**
 * End to end over real SMTP: the Nodemailer provider sends to an SMTP server on loopback, the test
 * reads the message as a mail client would (mailparser), follows the link through the confirmation
 * page and is signed in, with JWT sessions and with database sessions in PGlite.
 */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAdapter } from '../../adapters/postgres.js'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import Nodemailer from '../../providers/nodemailer.js'
import { authRequest, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { startSmtpServer, type RunningSmtpServer } from '../fixtures/smtp.js'
import { EmailClient } from './helpers.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
let smtp: RunningSmtpServer
let db: PGlite
let adapter: PostgresAdapter

beforeAll(async () => {
  smtp = await startSmtpServer()
  db = new PGlite()
  adapter = PostgresAdapter(db)
  await adapter.migrate()
})
afterAll(async () => {
  await smtp?.close()
  await db?.close()
})

function config(strategy: 'jwt' | 'database', provider: Record<string, unknown> = {}): AuthConfig {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    adapter,
    session: { strategy },
    theme: { brandColor: '#0a7', buttonText: '#fff' },
    providers: [Nodemailer({ server: smtp.url, from: 'authchart <no-reply@authchart.test>', ...provider })],
  }
}

/** The link in the message, found as a reader would: the HTML's button and the text's line. */
function linkIn(mail: Awaited<ReturnType<RunningSmtpServer['next']>>): URL {
  const fromText = /^(https:\/\/\S+)$/m.exec(mail.text ?? '')![1]!
  const fromHtml = /<a href="([^"]+)"/.exec(String(mail.html))![1]!.replace(/&amp;/g, '&')
  expect(fromHtml).toBe(fromText)
  return new URL(fromText)
}

describe.each(['jwt', 'database'] as const)('e-mail sign-in over SMTP with %s sessions', (strategy) => {
  it('sends the message, and the link signs in through the confirmation page', async () => {
    const auth = config(strategy)
    const client = new EmailClient(auth)
    const address = `reader-${strategy}@example.com`
    const asked = await client.requestLink(address.toUpperCase(), { callbackUrl: '/library' }, 'nodemailer')
    expect(asked.headers.get('location')).toBe(`${ORIGIN}/auth/verify-request?provider=nodemailer&type=email`)

    const mail = await smtp.next()
    expect(mail.subject).toBe('Sign in to authchart.test')
    expect(mail.from?.value).toEqual([{ name: 'authchart', address: 'no-reply@authchart.test' }])
    expect(mail.to && 'text' in mail.to ? mail.to.text : '').toBe(address)
    expect(String(mail.html)).toContain('Sign in to <strong>authchart&#8203;.test</strong>')
    expect(String(mail.html)).toContain('bgcolor="#0a7"')
    const link = linkIn(mail)
    expect(link.origin + link.pathname).toBe(`${ORIGIN}/auth/callback/nodemailer`)

    const signedIn = await client.confirm(link)
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/library`)
    const cookie = setCookie(signedIn, SESSION_COOKIE)!
    const user = await adapter.getUserByEmail(address)
    expect(user?.emailVerified).toBeInstanceOf(Date)
    if (strategy === 'database') {
      const stored = await adapter.getSessionAndUser(cookie.value)
      expect(stored?.user.email).toBe(address)
    } else {
      const token = await decode({ token: cookie.value, secret: SECRET, salt: SESSION_COOKIE })
      expect(token).toMatchObject({ email: address, sub: user!.id })
    }
    const { body } = await client.session()
    expect(body).toMatchObject({ user: { email: address } })
  })

  it('signs in with the code from the message, in the browser that asked', async () => {
    const auth = config(strategy, { code: true })
    const client = new EmailClient(auth)
    const address = `coder-${strategy}@example.com`
    await client.requestLink(address, {}, 'nodemailer')
    const mail = await smtp.next()
    const code = /Or enter this code on the sign-in page: ([0-9A-Z]{6})/.exec(mail.text ?? '')![1]!
    expect(String(mail.html)).toContain(`${code}</strong>`)
    const signedIn = await client.enterCode(code, 'nodemailer')
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
    expect((await client.session()).body).toMatchObject({ user: { email: address } })
  })

  it('creates exactly one session from twenty concurrent confirmations of one link', async () => {
    const auth = config(strategy)
    const address = `racer-${strategy}@example.com`
    await new EmailClient(auth).requestLink(address, {}, 'nodemailer')
    const link = linkIn(await smtp.next())
    // Twenty browsers each load the confirmation page, then all press the button at once.
    const clients = Array.from({ length: 20 }, () => new EmailClient(auth))
    const forms = await Promise.all(
      clients.map(async (client) => {
        const page = await client.open(link)
        const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(await page.text())![1]!
        return { client, csrfToken }
      }),
    )
    const responses = await Promise.all(
      forms.map(({ client, csrfToken }) =>
        Auth(
          authRequest({
            path: '/auth/callback/nodemailer',
            body: { token: link.searchParams.get('token')!, email: address, csrfToken },
            cookies: client.jar,
          }),
          auth,
        ),
      ),
    )
    const sessions = responses.filter((r) => setCookie(r, SESSION_COOKIE) !== undefined)
    expect(sessions).toHaveLength(1)
    expect(responses.filter((r) => r.headers.get('location') === `${ORIGIN}/auth/error?error=Verification`)).toHaveLength(19)
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s."userId" WHERE u.email = $1',
      [address],
    )
    expect(rows[0]!.n).toBe(strategy === 'database' ? 1 : 0)
  })
})

describe('the Nodemailer provider', () => {
  it('fails the sign-in with EmailSignin when the SMTP server is unreachable, logging no token', async () => {
    const auth = config('jwt', { server: 'smtp://127.0.0.1:1' })
    const response = await new EmailClient(auth).requestLink('nobody@example.com', {}, 'nodemailer')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    const logger = auth.logger as ReturnType<typeof spyLogger>
    const error = logger.error.mock.calls.at(-1)![0]
    expect(error.type).toBe('EmailSignInError')
    expect(JSON.stringify([error.message, error.cause?.err?.message])).not.toMatch(/token=/)
  })

  it('requires a server, as Auth.js does', () => {
    expect(() => Nodemailer({} as never)).toThrow('Nodemailer requires a `server` configuration')
  })
})
