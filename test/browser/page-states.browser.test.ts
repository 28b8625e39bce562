/**
 * The built-in pages a user reaches by a link rather than through a flow, in Chromium: the
 * sign-in page signed out, with an error and signed in; the sign-out page signed in and signed
 * out; every error page; a step that does not exist; the verify-request page. Each answers with
 * its status, renders, and passes axe with no serious or critical violation; each state's
 * screenshot is kept under test/browser/output/.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBrowserApp, type BrowserApp } from '../fixtures/browser-app.js'
import { credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { seriousViolations, type PageState } from '../fixtures/page-audit.js'

let server: BrowserApp
let browser: Browser

beforeAll(async () => {
  server = await startBrowserApp({ secret: SECRET, trustHost: true, logger: spyLogger(), providers: [credentialsProvider()] } as never)
  browser = server.browser
})
afterAll(() => server?.close())

/** Opens `path`, expects `status`, and gives the state as the browser has it. */
async function visit(page: Page, name: string, path: string, status: number): Promise<PageState> {
  const response = await page.goto(`${server.origin}${path}`)
  expect(response?.status(), `${name}: ${path}`).toBe(status)
  return { name, markup: await page.content() }
}

describe('built-in pages reached by a link', () => {
  it('answer with their status, and pass axe signed out and signed in', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const states: PageState[] = []
    states.push(await visit(page, 'signin', '/auth/signin', 200))
    states.push(await visit(page, 'signin-error', '/auth/signin?error=CredentialsSignin', 200))
    const signedOut = await visit(page, 'signout-nobody', '/auth/signout', 200)
    expect(signedOut.markup).toContain('You are not signed in.')
    states.push(signedOut)
    for (const [error, status] of [
      ['Configuration', 500],
      ['AccessDenied', 403],
      ['Verification', 403],
      ['UnknownProvider', 404],
      ['FlowExpired', 400],
      ['Other', 200],
    ] as const) {
      states.push(await visit(page, `error-${error}`, `/auth/error?error=${error}`, status))
    }
    const unknownStep = await visit(page, 'step-unknown', '/auth/step/nope', 404)
    expect(unknownStep.markup).toContain('<h1>Page not found</h1>')
    states.push(unknownStep)
    states.push(await visit(page, 'verify-request', '/auth/verify-request', 200))

    await page.goto(`${server.origin}/auth/signin`)
    await page.fill('input[name="username"]', 'alice')
    await page.fill('input[name="password"]', 'wonderland')
    await Promise.all([page.waitForURL(`${server.origin}/`), page.click('form[action$="/callback/credentials"] button')])
    const signedIn = await visit(page, 'signin-signed-in', '/auth/signin', 200)
    expect(signedIn.markup).toMatch(/You are signed in as <strong class="address">/)
    states.push(signedIn)
    const asking = await visit(page, 'signout', '/auth/signout', 200)
    expect(asking.markup).toContain('Are you sure you want to sign out?')
    states.push(asking)

    expect(await seriousViolations(browser, states)).toEqual([])
    await context.close()
  }, 120_000)
})
