/**
 * The built-in pages' Content-Security-Policy in Chromium (issue #48 item 8), from the browser's
 * side: the sign-in page framed by a page of another origin is not shown (the attack: a decoy
 * over an invisible frame of our password form), and every page's own scripts still run with no
 * policy violation (the sign-in page's credentials and passkey scripts, the re-authentication page
 * and the page that resumes the action by script, the two-step and sessions pages, the flow
 * inspector). test/surfaces/page-framing.test.ts checks the headers at the HTTP level.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { flowInspector } from '../../core/inspector.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'
import Credentials from '../../providers/credentials.js'
import Passkey from '../../providers/passkey.js'
import { launchChromium } from '../fixtures/chromium.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { signInWithCredentials, startPageFlowsApp, type PageFlowsApp } from './page-flows-app.js'

let app: PageFlowsApp
let browser: Browser
/** A site of another origin (127.0.0.1, where the app is localhost) that frames our pages. */
let framer: Server
let framerOrigin = ''

beforeAll(async () => {
  app = await startPageFlowsApp(() => ({
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    adapter: MemoryAdapter(createMemoryStore()),
    session: { strategy: 'database' },
    experimental: { enableWebAuthn: true },
    secondFactor: totp(),
    stepUp: stepUp(),
    inspector: flowInspector(),
    providers: [
      Credentials({
        credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
        authorize: ({ username, password }) =>
          username === 'alice' && password === 'wonderland' ? { id: 'u-alice', name: 'alice', email: 'alice@example.com' } : null,
      }),
      Passkey(),
    ],
  }) as never)
  framer = createServer((req, res) => {
    const target = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? ''
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!DOCTYPE html><html><body><h1>Win a prize</h1><iframe id="victim" src="${target.replace(/"/g, '')}" width="600" height="600"></iframe></body></html>`)
  })
  await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve))
  framerOrigin = `http://127.0.0.1:${(framer.address() as AddressInfo).port}`
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await new Promise((resolve) => framer?.close(resolve))
})

/** A page that records every CSP violation and console error it sees. */
async function watchedPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  await page.exposeFunction('reportViolation', (text: string) => problems.push(`violation: ${text}`))
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      ;(window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI}`)
    })
  })
  return { page, problems }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('the built-in pages in Chromium under their policy', () => {
  it('does not show the sign-in page inside a frame of another origin', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const refusals: string[] = []
    page.on('console', (message) => refusals.push(message.text()))
    await page.goto(`${framerOrigin}/?src=${encodeURIComponent(`${app.origin}/auth/signin`)}`)
    await page.waitForTimeout(500)
    const frame = page.frames().find((f) => f !== page.mainFrame())
    expect(frame, 'the iframe exists').toBeDefined()
    // A refused frame shows Chromium's error page, never our form.
    expect(await frame!.$('input[name="password"]'), 'the password form is not rendered in the frame').toBeNull()
    expect(refusals.join('\n')).toMatch(/frame-ancestors/)

    // The same page opened on its own renders its form.
    await page.goto(`${app.origin}/auth/signin`)
    expect(await page.$('input[name="password"]')).not.toBeNull()
    await context.close()
  })

  it("runs the sign-in page's scripts (credentials, the passkey library and clients) with no violation", async () => {
    const context = await browser.newContext()
    const { page, problems } = await watchedPage(context)
    await page.goto(`${app.origin}/auth/signin`)
    await page.waitForLoadState('networkidle')
    expect(await page.evaluate(() => typeof (window as unknown as { SimpleWebAuthnBrowser?: unknown }).SimpleWebAuthnBrowser)).toBe('object')
    // The credentials script keeps a typed username across a refused attempt.
    await page.fill('input[name="username"]', 'alice')
    await page.fill('input[name="password"]', 'wrong')
    await page.click('button:has-text("Sign in with Credentials")')
    await page.waitForURL(/error=CredentialsSignin/)
    expect(await page.inputValue('input[name="username"]'), 'the script put the username back').toBe('alice')
    expect(problems).toEqual([])
    await context.close()
  })

  it('runs the re-authentication page and the script that resumes the action, and the two-step and sessions pages, with no violation', async () => {
    const context = await browser.newContext()
    const { page, problems } = await watchedPage(context)
    await signInWithCredentials(page, app)
    // The passkey client ran: it asked for the session and shows a signed-in user the add button.
    await page.goto(`${app.origin}/auth/signin`)
    await page.locator('#passkey-add').waitFor({ state: 'visible', timeout: 5_000 })
    await page.goto(`${app.origin}/auth/sessions`)
    await page.goto(`${app.origin}/auth/two-factor`)
    // The server's clock moves on: the sign-in is no longer fresh enough to turn two-step on.
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 11 * 60_000)
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/step/reauthenticate`),
      page.getByRole('button', { name: 'Turn on two-step verification' }).click(),
    ])
    await page.getByLabel('Username').fill('alice')
    await page.getByLabel('Password').fill('wonderland')
    // The proof's answer is the resume page, which posts the action's form by script: the browser
    // lands on the enrolment step only if that script ran.
    await Promise.all([
      page.waitForURL(`${app.origin}/auth/step/totp-enrolment`),
      page.getByRole('button', { name: 'Confirm with your password' }).click(),
    ])
    expect(problems).toEqual([])
    await context.close()
  })

  it('runs the flow inspector page with no violation', async () => {
    const context = await browser.newContext()
    const { page, problems } = await watchedPage(context)
    const response = await page.goto(`${app.origin}/auth/__flows`)
    expect(response!.status()).toBe(200)
    expect(response!.headers()['content-security-policy']).toMatch(/frame-ancestors 'none'/)
    await page.waitForLoadState('networkidle')
    expect(problems).toEqual([])
    await context.close()
  })
})
