/**
 * The pages a user meets when something happens that is not their doing, and the activity page, in
 * headless Chromium: only typing and clicking, so a page that cannot be read or a button that
 * leads nowhere fails here as it would for a person.
 * - The database goes away while the user signs in: the 503 page says to try again in how long,
 *   and its button, once the database is back, signs them in where they were going.
 * - A deploy changed the e-mail chart while a code was on its way: the 409 page says to sign in
 *   again, and its button starts a sign-in that finishes where the first one was going.
 * - `GET /auth/audit` in the browser: the user's own recent activity, and nobody else's.
 */
import { PGlite } from '@electric-sql/pglite'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { createMachine, type AnyStateMachine } from 'xstate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { PostgresAuditStore } from '../../adapters/postgres-audit.js'
import { createHandler } from '../../core/auth.js'
import { defineFlow } from '../../core/engine/flow.js'
import { emailSignInFlow } from '../../core/flows/email/flow.js'
import type { RequestContext } from '../../core/http/context.js'
import { routesOf, type Route } from '../../core/http/routes.js'
import type { Adapter } from '../../core/shapes.js'
import type { AuthConfig } from '../../core/types.js'
import { emailSignInMachine } from '../../machines/email-signin.machine.js'
import Credentials from '../../providers/credentials.js'
import Email from '../../providers/email.js'
import { launchChromium } from '../fixtures/chromium.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { send, toWebRequest } from '../fixtures/https-app.js'
import { auditTrail } from '../../core/audit.js'
import { everyFlow } from '../../core/flows/catalogue.js'

/** Every route authchart ships: the built-in flows' and the optional features'. */
const routes = routesOf(everyFlow)

type Handler = ReturnType<typeof createHandler>

/** An app whose auth handler can be swapped between requests, as a rolling deploy does. */
async function startApp(configFor: (origin: string) => AuthConfig, handler: Handler) {
  const app = { origin: '', handler, config: undefined as unknown as AuthConfig }
  const server = createServer((req, res) => {
    const handle = async () => {
      if (req.url?.startsWith('/auth/')) return send(res, await app.handler(await toWebRequest(req, app.origin), app.config as Omit<AuthConfig, 'raw'>))
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><title>Dashboard</title><h1>Dashboard</h1>')
    }
    handle().catch((error: unknown) => res.writeHead(500).end(String(error)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  app.origin = `http://localhost:${(server.address() as AddressInfo).port}`
  app.config = configFor(app.origin)
  return Object.assign(app, {
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  })
}

const builtIn = createHandler(routes)

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

async function freshPage(): Promise<Page> {
  return (await browser.newContext()).newPage()
}

async function signInWithPassword(page: Page, origin: string, username: string, callbackUrl = `${origin}/dashboard`) {
  await page.goto(`${origin}/auth/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill('pw')
  return Promise.all([page.waitForNavigation(), page.getByRole('button', { name: /sign in with/i }).click()])
}

const everyone = () =>
  Credentials({
    credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
    authorize: ({ username, password }) => (password === 'pw' ? { id: `user-${String(username)}`, name: String(username) } : null),
  })

describe('the 503 page', () => {
  it('tells the user to try again in how long, and its button signs them in once the database is back', async () => {
    const store = createMemoryStore()
    const memory = MemoryAdapter(store)
    let down = false
    const outage = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
    // Every adapter call fails as an unreachable database does while `down`.
    const adapter = new Proxy(memory, {
      get: (target, name) => {
        const method = Reflect.get(target, name) as unknown
        if (typeof method !== 'function') return method
        return (...args: unknown[]) => (down ? Promise.reject(outage()) : (method as (...a: unknown[]) => unknown).apply(target, args))
      },
    }) as Adapter
    const logger = spyLogger()
    const app = await startApp(
      () => ({ secret: SECRET, trustHost: true, logger, adapter, session: { strategy: 'database' }, availability: { retryAfter: 7 }, providers: [everyone()] }) as AuthConfig,
      builtIn,
    )
    try {
      const page = await freshPage()
      await page.goto(`${app.origin}/auth/signin?callbackUrl=${encodeURIComponent(`${app.origin}/dashboard`)}`)
      down = true
      await page.getByLabel('Username').fill('alice')
      await page.getByLabel('Password').fill('pw')
      const [answer] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: /sign in with/i }).click()])
      expect(answer?.status()).toBe(503)
      expect(answer?.headers()['retry-after']).toBe('7')
      await expect(page.getByRole('heading', { name: 'Service unavailable' }).isVisible()).resolves.toBe(true)
      expect(await page.locator('body').innerText()).toContain('Try again in 7 seconds.')
      expect(store.sessions.size).toBe(0)
      const cookies = await page.context().cookies()
      expect(cookies.some((cookie) => cookie.name.includes('session-token'))).toBe(false)

      down = false
      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Try again' }).click()])
      const [signedIn] = await signInWithPassword(page, app.origin, 'alice', new URL(page.url()).searchParams.get('callbackUrl')!)
      expect(signedIn?.status()).toBe(200)
      expect(new URL(page.url()).pathname).toBe('/dashboard')
      expect(store.sessions.size).toBe(1)
      // The outage is logged as one, with no stack or secret in it.
      expect(JSON.stringify(logger.error.mock.calls)).not.toContain('pw')
    } finally {
      await app.close()
    }
  })
})

describe('the 409 page', () => {
  /** Version N+1 of the e-mail chart: the state waiting for the code renamed, no migration declared. */
  function nextDeployment(): Handler {
    const rename = (value: unknown): unknown => {
      if (value === 'awaitingCode') return 'waitingForCode'
      if (Array.isArray(value)) return value.map(rename)
      if (typeof value !== 'object' || value === null) return value
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key === 'awaitingCode' ? 'waitingForCode' : key, rename(item)]))
    }
    const config = rename(emailSignInMachine.config) as typeof emailSignInMachine.config
    const machine: AnyStateMachine = createMachine({ ...config, version: `${emailSignInMachine.version}-next` }, emailSignInMachine.implementations as never)
    const flow = defineFlow<AnyStateMachine, RequestContext>({ ...emailSignInFlow, machine })
    return createHandler(
      routes.map((route): Route =>
        route.provider === 'email' && typeof route.serve !== 'function' ? ({ ...route, serve: { ...route.serve, flow } } as Route) : route,
      ),
    )
  }

  it('asks the user to sign in again after a deploy changed the flow, and its button finishes where they were going', async () => {
    const codes: string[] = []
    const app = await startApp(
      () =>
        ({
          secret: SECRET,
          trustHost: true,
          logger: spyLogger(),
          adapter: MemoryAdapter(createMemoryStore()),
          providers: [Email({ code: true, sendVerificationRequest: async ({ code }) => void codes.push(code!) })],
        }) as AuthConfig,
      builtIn,
    )
    try {
      const page = await freshPage()
      const dashboard = `${app.origin}/dashboard`
      await page.goto(`${app.origin}/auth/signin?callbackUrl=${encodeURIComponent(dashboard)}`)
      await page.getByLabel(/e-?mail/i).fill('alice@example.com')
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: /sign in with/i }).click()])
      expect(codes).toHaveLength(1)

      app.handler = nextDeployment()
      await page.getByLabel(/code/i).fill(codes[0]!)
      const [answer] = await Promise.all([page.waitForNavigation(), page.getByRole('button').first().click()])
      expect(answer?.status()).toBe(409)
      await expect(page.getByRole('heading', { name: 'Please sign in again' }).isVisible()).resolves.toBe(true)
      expect((await page.context().cookies()).some((cookie) => cookie.name.includes('session-token'))).toBe(false)

      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Try again' }).click()])
      expect(new URL(page.url()).searchParams.get('callbackUrl')).toBe(dashboard)
      await page.getByLabel(/e-?mail/i).fill('alice@example.com')
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: /sign in with/i }).click()])
      expect(codes).toHaveLength(2)
      await page.getByLabel(/code/i).fill(codes[1]!)
      await Promise.all([page.waitForURL(dashboard), page.getByRole('button').first().click()])
      expect((await page.context().cookies()).some((cookie) => cookie.name.includes('session-token'))).toBe(true)
    } finally {
      await app.close()
    }
  })
})

describe('the activity page', () => {
  let db: PGlite
  let audit: ReturnType<typeof PostgresAuditStore>
  // PGlite compiles its WebAssembly on start: seconds on a busy machine, so outside the test's time.
  beforeAll(async () => {
    db = new PGlite()
    audit = PostgresAuditStore(db)
    await audit.migrate()
  }, 120_000)
  afterAll(() => db?.close())

  it("shows the signed-in user's own sign-ins and sign-outs, and none of another user's", async () => {
    const app = await startApp(() => ({ secret: SECRET, trustHost: true, logger: spyLogger(), providers: [everyone()], audit: auditTrail({ sink: audit }) }) as AuthConfig, builtIn)
    try {
      const mallory = await freshPage()
      await signInWithPassword(mallory, app.origin, 'mallory')
      const alice = await freshPage()
      await signInWithPassword(alice, app.origin, 'alice')
      await alice.goto(`${app.origin}/auth/signout`)
      await Promise.all([alice.waitForNavigation(), alice.getByRole('button', { name: /sign out/i }).click()])
      await signInWithPassword(alice, app.origin, 'alice')

      const page = await alice.goto(`${app.origin}/auth/audit`)
      expect(page?.status()).toBe(200)
      expect(page?.headers()['content-type']).toContain('text/html')
      await expect(alice.getByRole('heading', { name: 'Recent activity' }).isVisible()).resolves.toBe(true)
      const rows = await alice.locator('li, tr').allInnerTexts()
      const text = rows.join('\n')
      expect(text.match(/Signed in/g)?.length).toBe(2)
      expect(text).toMatch(/Signed out/)
      // Mallory signed in once: had her event leaked, Alice would see three sign-ins.
      expect((await mallory.goto(`${app.origin}/auth/audit`))?.status()).toBe(200)
      expect((await mallory.locator('body').innerText()).match(/Signed in/g)?.length).toBe(1)
      expect(await mallory.locator('body').innerText()).not.toMatch(/Signed out/)
    } finally {
      await app.close()
    }
  })
})
