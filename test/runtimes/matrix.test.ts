/**
 * The runtime matrix: one app (./app.ts, every kind of provider) served by Node, Bun, Deno and
 * workerd, each installed from npm, driven over real HTTP on loopback by the same scenarios:
 * credentials sign-in and sign-out, a JWT session read and update, OIDC at a local oidc-provider
 * (under Node), an e-mail code through a stand-in of Resend's API, and passkey options. Bun and Deno
 * keep users in PostgreSQL (a throwaway server, through `pg`); Node and workerd in memory.
 *
 * A runtime that is not installed fails with the command that installs it: nothing is skipped.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OP_ACCOUNT, startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { startPostgres, type PostgresServer } from '../fixtures/postgres.js'
import { RUNTIME_USER } from './app.js'
import { bundleEntry, freePort, RUNTIMES, startRuntime } from './launch.mjs'

const SECRET = 'runtime-matrix-secret-that-is-long-enough-0123456789'
const OP_CLIENT_SECRET = 'runtime-matrix-client-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const WITH_POSTGRES = new Set(['bun', 'deno'])

/** A message the stand-in sender received, as Resend's API takes it. */
interface SentMail {
  from: string
  to: string | string[]
  subject: string
  text: string
  html: string
  authorization: string | undefined
}

/** Resend's `POST /emails` on loopback: records the message, answers an id. */
async function startMailStandIn(): Promise<{ url: string; sent: SentMail[]; server: Server }> {
  const sent: SentMail[] = []
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    if (req.method !== 'POST' || req.url !== '/emails') {
      res.writeHead(404).end()
      return
    }
    sent.push({ ...JSON.parse(Buffer.concat(chunks).toString()), authorization: req.headers.authorization })
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `mail-${sent.length}` }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent, server }
}

/** A browser over real HTTP: keeps cookies, follows nothing by itself. */
class Browser {
  readonly cookies = new Map<string, string>()
  constructor(readonly origin: string) {}

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const response = await fetch(new URL(url, this.origin), {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    })
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq)
      const expired = attributes.some((a) => /^\s*max-age=0$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a))
      if (expired) this.cookies.delete(name)
      else this.cookies.set(name, pair!.slice(eq + 1))
    }
    return response
  }

  async csrfToken(): Promise<string> {
    const { csrfToken } = (await (await this.request('/auth/csrf')).json()) as { csrfToken: string }
    return csrfToken
  }

  async session(): Promise<{ user?: { name?: string; email?: string }; expires?: string } | null> {
    const response = await this.request('/auth/session')
    expect(response.status).toBe(200)
    return (await response.json()) as { user?: { name?: string; email?: string } } | null
  }

  sessionCookie(): string | undefined {
    return this.cookies.get('authjs.session-token')
  }
}

interface Running {
  origin: string
  stop(): Promise<void>
}

let op: RunningOidcProvider
let mail: Awaited<ReturnType<typeof startMailStandIn>>
let postgres: PostgresServer
const running = new Map<string, Running>()
const startup = new Map<string, Error>()

beforeAll(async () => {
  const ports = Object.fromEntries(await Promise.all(RUNTIMES.map(async (runtime) => [runtime, await freePort()] as const)))
  ;[mail, postgres, op] = await Promise.all([
    startMailStandIn(),
    startPostgres(),
    startOidcProvider({
      clients: [
        {
          client_id: 'runtime-app',
          client_secret: OP_CLIENT_SECRET,
          redirect_uris: RUNTIMES.map((runtime) => `http://127.0.0.1:${ports[runtime]}/auth/callback/op`),
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
    }),
  ])
  await Promise.all(
    RUNTIMES.map(async (runtime) => {
      try {
        const file = await bundleEntry(runtime)
        const env = {
          AUTH_SECRET: SECRET,
          OP_ISSUER: op.issuer,
          OP_CLIENT_SECRET,
          MAIL_API: mail.url,
          ...(WITH_POSTGRES.has(runtime) ? { DATABASE_URL: await postgres.createDatabase(`runtime_${runtime}`) } : {}),
        }
        running.set(runtime, await startRuntime(runtime, { file, port: ports[runtime]!, env }))
      } catch (error) {
        // Reported by each of the runtime's tests, with the install command when it is missing.
        startup.set(runtime, error as Error)
      }
    }),
  )
}, 120_000)

afterAll(async () => {
  await Promise.all([...running.values()].map((r) => r.stop()))
  await Promise.all([op?.close(), postgres?.stop(), new Promise((resolve) => mail?.server.close(resolve))])
})

function app(runtime: string): Running {
  const failed = startup.get(runtime)
  if (failed) throw failed
  return running.get(runtime)!
}

describe.each(RUNTIMES)('on %s', (runtime) => {
  it('signs in with credentials, reads and updates the JWT session, and signs out', async () => {
    const browser = new Browser(app(runtime).origin)
    expect(await browser.session()).toBeNull()

    const signIn = await browser.request('/auth/callback/credentials', {
      form: { ...RUNTIME_USER, csrfToken: await browser.csrfToken(), callbackUrl: `${browser.origin}/account` },
    })
    expect(signIn.status).toBe(302)
    expect(signIn.headers.get('location')).toBe(`${browser.origin}/account`)
    const first = browser.sessionCookie()
    expect(first).toBeDefined()
    expect((await browser.session())?.user).toEqual({ name: 'Alice', email: 'alice@example.com' })

    // An update re-issues the JWT: a new cookie, still Alice's.
    const update = await browser.request('/auth/session', { form: { csrfToken: await browser.csrfToken() } })
    expect(update.status).toBe(200)
    expect(((await update.json()) as { user: { name: string } }).user.name).toBe('Alice')
    expect(browser.sessionCookie()).toBeDefined()
    expect(browser.sessionCookie()).not.toBe(first)
    expect((await browser.session())?.user?.email).toBe('alice@example.com')

    const signOut = await browser.request('/auth/signout', { form: { csrfToken: await browser.csrfToken() } })
    expect(signOut.status).toBe(302)
    expect(browser.sessionCookie()).toBeUndefined()
    expect(await browser.session()).toBeNull()
  })

  it('refuses a wrong password with the CredentialsSignin redirect', async () => {
    const browser = new Browser(app(runtime).origin)
    const refused = await browser.request('/auth/callback/credentials', {
      form: { username: 'alice', password: 'looking-glass', csrfToken: await browser.csrfToken() },
    })
    expect(refused.status).toBe(302)
    expect(refused.headers.get('location')).toBe(`${browser.origin}/auth/signin?error=CredentialsSignin&code=credentials`)
    expect(browser.sessionCookie()).toBeUndefined()
  })

  it('signs in at the local OpenID Provider', async () => {
    const browser = new Browser(app(runtime).origin)
    const start = await browser.request('/auth/signin/op', { form: { csrfToken: await browser.csrfToken(), callbackUrl: `${browser.origin}/home` } })
    expect(start.status).toBe(302)
    const authorization = start.headers.get('location')!
    expect(authorization.startsWith(op.issuer)).toBe(true)

    const back = await visitProvider(authorization, `${browser.origin}/auth/callback/op`)
    const callback = await browser.request(back.url.href, back.form ? { form: back.form } : {})
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe(`${browser.origin}/home`)
    expect((await browser.session())?.user).toMatchObject({ name: OP_ACCOUNT.name, email: OP_ACCOUNT.email.toLowerCase() })
  })

  it('sends an e-mail code through the stand-in sender and signs in the browser that types it', async () => {
    const browser = new Browser(app(runtime).origin)
    const address = `ada.${runtime}@example.com`
    const request = await browser.request('/auth/signin/resend', { form: { email: address, csrfToken: await browser.csrfToken() } })
    expect(request.status).toBe(302)
    expect(request.headers.get('location')).toContain('/auth/verify-request')

    const message = mail.sent.find((m) => [m.to].flat().includes(address))
    expect(message).toMatchObject({ from: 'no-reply@example.com', authorization: 'Bearer stand-in-key' })
    const code = /enter this code on the sign-in page: (\S+)/.exec(message!.text)?.[1]
    expect(code).toMatch(/^[0-9A-Z]{6}$/)

    const signedIn = await browser.request('/auth/callback/resend', { form: { code: code!, csrfToken: await browser.csrfToken() } })
    expect(signedIn.status).toBe(302)
    expect(signedIn.headers.get('location')).not.toContain('error=')
    expect((await browser.session())?.user?.email).toBe(address)
  })

  it('hands out passkey authentication options with a sealed challenge', async () => {
    const browser = new Browser(app(runtime).origin)
    const response = await browser.request('/auth/webauthn-options/passkey?action=authenticate')
    expect(response.status).toBe(200)
    const { action, options } = (await response.json()) as { action: string; options: { rpId: string; challenge: string; userVerification: string } }
    expect(action).toBe('authenticate')
    expect(options).toMatchObject({ rpId: 'localhost', userVerification: 'required' })
    expect(options.challenge).toMatch(/^[\w-]{43}$/)
    expect(browser.cookies.has('authjs.challenge')).toBe(true)
  })
})
