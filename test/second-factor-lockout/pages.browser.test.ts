/**
 * Issue #48 item 3 and #43 item 8 in Chromium, clicked as a person would: the owner turns on
 * two-step verification and signs in once with the app's code (the browser becomes a known
 * device); another browser typing that same code is told it was already used; someone who knows
 * the password types wrong codes until codes from their browser are paused, and is told that
 * someone is trying codes; the owner's browser, at the same address (every browser here is on
 * loopback), still signs in with the next code. Each state is screenshotted.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TOTP } from 'otpauth'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { CODE_MESSAGES } from '../../core/pages/messages.js'
import { totp } from '../../core/second-factor.js'
import { CLEAN_CLIENT_CODES, MAX_CODE_ATTEMPTS, MAX_USER_ATTEMPTS } from '../../core/second-factor/index.js'
import { stepUp } from '../../core/step-up.js'
import { startBrowserApp, type BrowserApp } from '../fixtures/browser-app.js'
import { credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { keepScreenshot } from '../fixtures/screenshot.js'

let app: BrowserApp
const shots = mkdtempSync(join(tmpdir(), 'authchart-lockout-'))
beforeAll(async () => {
  app = await startBrowserApp({
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    adapter: MemoryAdapter(createMemoryStore()),
    secondFactor: totp(),
    stepUp: stepUp(),
    providers: [credentialsProvider()],
  } as never)
}, 60_000)
afterAll(async () => {
  await app?.close()
  rmSync(shots, { recursive: true, force: true })
})

async function newPage(): Promise<Page> {
  const context = await app.browser.newContext({ viewport: { width: 1280, height: 900 } })
  context.setDefaultTimeout(10_000)
  return context.newPage()
}

async function signInWithPassword(page: Page): Promise<void> {
  await page.goto(`${app.origin}/auth/signin`)
  await page.getByLabel('Username').fill('alice')
  await page.getByLabel('Password').fill('wonderland')
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: /sign in with/i }).click()])
}

async function typeCode(page: Page, code: string): Promise<void> {
  await page.getByLabel('Code', { exact: true }).fill(code)
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Verify' }).click()])
}

async function shot(page: Page, name: string): Promise<void> {
  const path = join(shots, `${name}.png`)
  await keepScreenshot(page, { path, fullPage: true })
  expect(statSync(path).size).toBeGreaterThan(5_000)
}

const step = () => Math.floor(Date.now() / 30_000)

describe('the second factor under a trickle of wrong codes, in Chromium', () => {
  it('tells a reused code and a paused browser apart, and lets the known device in', async () => {
    const owner = await newPage()
    await signInWithPassword(owner)
    await owner.goto(`${app.origin}/auth/two-factor`)
    await owner.getByRole('button', { name: 'Turn on two-step verification' }).click()
    const secret = (await owner.locator('code.secret').textContent())!.trim()
    const authenticator = new TOTP({ secret, digits: 6, period: 30, algorithm: 'SHA1' })
    // Each time step signs in once: a code of a step within one of now that has not been used.
    const spent = new Set<number>()
    const freshCode = () => {
      const fresh = [step(), step() + 1, step() - 1].find((s) => !spent.has(s))!
      spent.add(fresh)
      return authenticator.generate({ timestamp: fresh * 30_000 })
    }
    await expect.poll(async () => (await owner.content()).toLowerCase().includes('backup code')).toBe(false)
    await owner.getByLabel('Code from the app').fill(freshCode())
    await owner.getByRole('button', { name: 'Turn on' }).click()
    await owner.getByRole('heading', { name: 'Two-step verification is on' }).waitFor()
    await owner.getByRole('link', { name: 'Done' }).click()
    await owner.context().clearCookies({ name: /session-token/ })

    // The owner signs in with the app's next code: this browser is a known device now.
    await signInWithPassword(owner)
    const used = freshCode()
    await typeCode(owner, used)
    expect(owner.url()).not.toContain('/step/')
    await owner.context().clearCookies({ name: /session-token/ })

    // Another browser typing the same code: already used, and the code field has the focus.
    const other = await newPage()
    await signInWithPassword(other)
    await typeCode(other, used)
    await expect.poll(() => other.getByRole('alert').textContent()).toBe(CODE_MESSAGES.codeUsed)
    expect(await other.evaluate(() => document.activeElement?.id)).toBe('code')
    await shot(other, 'code-already-used')

    // Someone who knows the password spends the codes from their browser, then keeps typing wrong
    // ones: once this minute's late check is taken, the page says someone is trying codes.
    const attacker = await newPage()
    let paused = false
    for (let sent = 0; !paused && sent < MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 3 * MAX_CODE_ATTEMPTS; ) {
      await signInWithPassword(attacker)
      for (let i = 0; i < MAX_CODE_ATTEMPTS && attacker.url().includes('/step/'); i++, sent++) {
        await typeCode(attacker, '000000')
        if (attacker.url().includes('/step/') && (await attacker.getByRole('alert').textContent()) === CODE_MESSAGES.codesTried) {
          paused = true
          break
        }
      }
    }
    expect(paused).toBe(true)
    await shot(attacker, 'someone-is-trying-codes')

    // The owner's browser, same address, still gets in.
    await signInWithPassword(owner)
    await typeCode(owner, freshCode())
    expect(owner.url()).not.toContain('/step/')
  })
})
