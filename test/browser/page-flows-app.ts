/**
 * The application the page-flow browser test clicks through: `Auth` behind `node:http` on
 * loopback, opened as `http://localhost:<port>` (a secure context and a valid WebAuthn RP id), with
 * a home page that says who is signed in and links to every built-in page a user reaches from an
 * application: sign-in, two-step settings, sessions, sign-out.
 *
 * @module
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { Auth } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'
import { send, toWebRequest } from '../fixtures/https-app.js'

/** A running app. */
export interface PageFlowsApp {
  /** `http://localhost:<port>` */
  origin: string
  close(): Promise<void>
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

async function homePage(req: IncomingMessage, origin: string, config: AuthConfig): Promise<string> {
  const sessionRequest = new Request(`${origin}/auth/session`, { headers: { cookie: req.headers.cookie ?? '' } })
  const session = (await (await Auth(sessionRequest, config as Omit<AuthConfig, 'raw'>)).json()) as { user?: { email?: string; name?: string } } | null
  const who = session?.user
    ? `<p id="who">Signed in as <strong>${escape(session.user.email ?? session.user.name ?? '')}</strong></p>`
    : '<p id="who">Not signed in</p>'
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Home</title></head><body><h1>Home</h1>${who}
<ul><li><a href="/auth/signin">Sign in</a></li><li><a href="/auth/two-factor">Two-step verification</a></li>
<li><a href="/auth/sessions">Your sessions</a></li><li><a href="/auth/signout">Sign out</a></li></ul></body></html>`
}

/**
 * Serves `configFor(origin)` on 127.0.0.1 (a free port); the origin is known before the config is
 * built, so a provider's redirect URI can name it.
 */
export async function startPageFlowsApp(configFor: (origin: string) => Promise<AuthConfig> | AuthConfig): Promise<PageFlowsApp> {
  let config: AuthConfig | undefined
  let origin = ''
  const server = createServer((req, res) => {
    const handle = async () => {
      if (req.url?.startsWith('/auth/')) return send(res, await Auth(await toWebRequest(req, origin), config! as Omit<AuthConfig, 'raw'>))
      if (req.url === '/' || req.url?.startsWith('/?')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        return res.end(await homePage(req, origin, config!))
      }
      res.writeHead(404).end()
    }
    handle().catch((error: unknown) => {
      res.writeHead(500).end(String(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://localhost:${(server.address() as AddressInfo).port}`
  config = await configFor(origin)
  return {
    origin,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** Who signs in with the credentials form, and where the browser lands. */
export interface CredentialsSignIn {
  /** `alice` by default. */
  username?: string
  /** `wonderland` by default. */
  password?: string
  /** Where the browser lands after the submit: the app's home page by default. */
  landing?: string | RegExp | ((url: URL) => boolean)
  /**
   * Open the sign-in page first (the default), or submit the form of the sign-in page already open
   * (reached through a link, or shown again after a refused attempt).
   */
  open?: boolean
}

/** Signs in through the built-in sign-in page's credentials form and waits until the browser lands. */
export async function signInWithCredentials(page: Page, app: { origin: string }, as: CredentialsSignIn = {}): Promise<void> {
  if (as.open !== false) await page.goto(`${app.origin}/auth/signin`)
  await page.getByLabel('Username').fill(as.username ?? 'alice')
  await page.getByLabel('Password').fill(as.password ?? 'wonderland')
  await Promise.all([page.waitForURL(as.landing ?? `${app.origin}/`), page.getByRole('button', { name: 'Sign in with Credentials' }).click()])
}
