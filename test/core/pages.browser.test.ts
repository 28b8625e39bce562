/**
 * The built-in pages in a real browser: served by `Auth` through Fastify on loopback, opened in
 * headless Chromium at a desktop and a phone width, screenshotted, and the card measured. Long text
 * (an error on the sign-in page, the error and verify-request pages) must not push the card off
 * the centre or out of the viewport.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import Credentials from '../../providers/credentials.js'
import { startBrowserApp, type BrowserApp } from '../fixtures/browser-app.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { keepScreenshot } from '../fixtures/screenshot.js'

let server: BrowserApp
let origin: string
let browser: Browser
const shots = mkdtempSync(join(tmpdir(), 'authchart-pages-'))

beforeAll(async () => {
  server = await startBrowserApp({
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    providers: [
      // No labels: the page must still read well.
      Credentials({ credentials: { username: {}, password: { type: 'password' } }, authorize: () => null }),
      { id: 'corp', name: 'Corporate single sign-on', type: 'oidc', issuer: 'https://sso.invalid', clientId: 'c', clientSecret: 's' },
    ],
  } as never)
  ;({ origin, browser } = server)
})

afterAll(async () => {
  await server?.close()
  rmSync(shots, { recursive: true, force: true })
})

/** Pages whose text is long enough to have moved the card. */
const PAGES: [string, string][] = [
  ['sign-in with an error', '/auth/signin?error=OAuthAccountNotLinked'],
  ['sign-in with a failed credentials attempt', '/auth/signin?error=CredentialsSignin&code=credentials'],
  ['configuration error', '/auth/error?error=Configuration'],
  ['access denied', '/auth/error?error=AccessDenied'],
  ['verification error', '/auth/error?error=Verification'],
  ['unknown error', '/auth/error?error=Something'],
  ['verify request', '/auth/verify-request'],
  ['sign out', '/auth/signout'],
]

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 375, height: 800 },
]

describe('the built-in pages in Chromium', () => {
  describe.each(VIEWPORTS)('at $name width ($width px)', (viewport) => {
    let page: Page
    beforeAll(async () => {
      page = await browser.newPage({ viewport: { width: viewport.width, height: viewport.height } })
    })
    afterAll(() => page?.close())

    it.each(PAGES)('centres the card of the %s page', async (name, path) => {
      const response = await page.goto(`${origin}${path}`)
      expect(response?.headers()['content-type']).toContain('text/html')
      const screenshot = join(shots, `${viewport.name}-${name.replace(/\W+/g, '-')}.png`)
      await keepScreenshot(page, { path: screenshot })
      expect(statSync(screenshot).size).toBeGreaterThan(5_000)
      const box = (await page.locator('.card').boundingBox())!
      const centre = box.x + box.width / 2
      expect(Math.abs(centre - viewport.width / 2), `${name}: card centre at ${centre} px`).toBeLessThanOrEqual(2)
      expect(box.x).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width).toBeLessThanOrEqual(viewport.width)
      if (box.height < viewport.height) {
        expect(Math.abs(box.y + box.height / 2 - viewport.height / 2)).toBeLessThanOrEqual(2)
      }
      // Text stays inside the card.
      expect(await page.$eval('.card', (card) => card.scrollWidth - card.clientWidth)).toBe(0)
      // Every id names one element.
      const ids = await page.$$eval('[id]', (elements) => elements.map((element) => element.id))
      expect(ids.filter((id, i) => ids.indexOf(id) !== i), `${name}: repeated ids`).toEqual([])
    })
  })

  it('labels credentials fields without a label by their capitalised key', async () => {
    const page = await browser.newPage()
    try {
      await page.goto(`${origin}/auth/signin`)
      const labels = await page.$$eval('label.section-header', (nodes) => nodes.map((n) => n.textContent))
      expect(labels).toEqual(['Username', 'Password'])
    } finally {
      await page.close()
    }
  })

  it('titles the sign-out page "Sign out"', async () => {
    const page = await browser.newPage()
    try {
      await page.goto(`${origin}/auth/signout`)
      expect(await page.locator('h1').textContent()).toBe('Sign out')
    } finally {
      await page.close()
    }
  })
})
