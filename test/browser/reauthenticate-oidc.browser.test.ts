/**
 * Step-up at the OpenID provider as a person meets it, in headless Chromium, with JWT and database
 * sessions: signed in through the provider, more than ten minutes later "Turn on two-step
 * verification" asks "Confirm it's you", the user chooses "Continue with Test OP", logs in at the
 * provider again (its login form: `prompt=login` asks even though the provider still has a
 * session), and the enrolment starts by itself, once. Only clicks; the server's clock is moved
 * forward (the provider runs in the same process, on the same clock).
 */
import type { Browser } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { decode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import Credentials from '../../providers/credentials.js'
import { launchChromium } from '../fixtures/chromium.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { OP_LOGIN, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { CLIENT_SECRET, opClient } from '../oauth/helpers.js'
import { startPageFlowsApp, type PageFlowsApp } from './page-flows-app.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

const STRATEGIES = ['jwt', 'database'] as const
const apps = new Map<string, { app: PageFlowsApp; op: RunningOidcProvider; store: ReturnType<typeof createMemoryStore> }>()
let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
  for (const strategy of STRATEGIES) {
    const store = createMemoryStore()
    let op: RunningOidcProvider | undefined
    const app = await startPageFlowsApp(async (origin) => {
      op = await startOidcProvider({ loginForm: true, clients: [await opClient('client_secret_basic', 'op', { redirect_uris: [`${origin}/auth/callback/op`] })] })
      return {
        secret: SECRET,
        secondFactor: totp(),
        stepUp: stepUp(),
        trustHost: true,
        logger: spyLogger(),
        adapter: MemoryAdapter(store),
        session: { strategy },
        providers: [
          Credentials({ credentials: { username: { label: 'Username' } }, authorize: () => null }),
          { id: 'op', name: 'Test OP', type: 'oidc', issuer: op.issuer, clientId: 'op', clientSecret: CLIENT_SECRET },
        ],
      } as AuthConfig
    })
    apps.set(strategy, { app, op: op!, store })
  }
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await Promise.all([...apps.values()].flatMap(({ app, op }) => [app.close(), op.close()]))
})

afterEach(() => {
  vi.useRealTimers()
})

describe.each(STRATEGIES)('re-authentication at the OpenID provider in a browser (%s sessions)', (strategy) => {
  it('asks a stale session, logs in again at the provider, and starts the enrolment once', async () => {
    const { app, op, store } = apps.get(strategy)!
    const context = await browser.newContext()
    context.setDefaultTimeout(10_000)
    const page = await context.newPage()
    const logIn = async () => {
      await page.getByLabel('Login').fill(OP_LOGIN.login)
      await page.getByLabel('Password').fill(OP_LOGIN.password)
    }

    await page.goto(`${app.origin}/auth/signin`)
    await Promise.all([page.waitForURL(`${op.issuer}/interaction/**`), page.getByRole('button', { name: 'Sign in with Test OP' }).click()])
    await logIn()
    await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Continue' }).click()])

    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 11 * 60_000)
    await page.goto(`${app.origin}/auth/two-factor`)
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/step/reauthenticate`),
      page.getByRole('button', { name: 'Turn on two-step verification' }).click(),
    ])
    await page.getByRole('heading', { name: "Confirm it's you to turn on two-step verification" }).waitFor()
    // The provider still has the sign-in's session; prompt=login asks for the login again.
    await Promise.all([page.waitForURL(`${op.issuer}/interaction/**`), page.getByRole('button', { name: 'Continue with Test OP' }).click()])
    await logIn()
    // Back at the registered callback, confirmed: the resume page posts the original form by itself.
    await Promise.all([page.waitForURL(`${app.origin}/auth/step/totp-enrolment`), page.getByRole('button', { name: 'Continue' }).click()])

    const now = Math.floor(Date.now() / 1000)
    const cookie = (await context.cookies()).find((c) => c.name === 'authjs.session-token')!
    if (strategy === 'jwt') {
      expect(((await decode({ token: cookie.value, secret: SECRET, salt: cookie.name })) as { fva?: Record<string, number> }).fva).toMatchObject({ fed: now })
    } else {
      expect(store.sessions.get(cookie.value)?.fva).toMatchObject({ fed: now })
    }
    // One user, one account: the login at the provider linked nothing new.
    expect([store.users.size, store.accounts.size]).toEqual([1, 1])
    await context.close()
  })
})
