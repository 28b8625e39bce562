/**
 * OpenID Connect Front-Channel Logout in a real browser: headless Chromium, the app over HTTPS at
 * `authchart.test`, the real OpenID Provider over HTTPS at `op.authchart.test` (both mapped to
 * 127.0.0.1: one site). The user signs out at the provider; the provider's page after the logout
 * loads our front-channel URI (with `iss` and the provider session's `sid`) in a hidden frame; that
 * browser's session ends. A second browser of the same user, signed in through another session at
 * the provider, stays signed in.
 *
 * The session cookie keeps its default, `SameSite=Lax`: a same-site frame carries it. A provider on
 * another site (a second one, on 127.0.0.1) gets a frame without it, and nothing ends, as README
 * says (Chromium also blocks third-party cookies outright, so `SameSite=None` would not help there).
 * Then the page itself: it renders, is never cached, and may be framed, unlike our pages that forbid it.
 */
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { customFetch } from '../../core/index.js'
import { launchChromium } from '../fixtures/chromium.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { startHttpsApp, type HttpsApp } from '../fixtures/https-app.js'
import { OP_ACCOUNT, OP_LOGIN, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient } from '../oauth/helpers.js'

const HOST = 'authchart.test'
const OP_HOST = `op.${HOST}`
const SESSION_COOKIE = '__Secure-authjs.session-token'
const FRONT_CHANNEL = '/auth/frontchannel-logout/'

let app: HttpsApp
/** The provider on the app's site. */
let op: RunningOidcProvider
/** A provider on another site. */
let farOp: RunningOidcProvider
let browser: Browser
const logger = spyLogger()

beforeAll(async () => {
  app = await startHttpsApp(HOST, async (origin) => {
    const client = (id: string) =>
      opClient('client_secret_basic', id, {
        redirect_uris: [`${origin}/auth/callback/${id}`],
        frontchannel_logout_uri: `${origin}${FRONT_CHANNEL}${id}`,
        frontchannel_logout_session_required: true,
      } as never)
    ;[op, farOp] = await Promise.all([
      startOidcProvider({ tlsHost: OP_HOST, loginForm: true, frontchannelLogout: true, clients: [await client('op')] }),
      startOidcProvider({ loginForm: true, frontchannelLogout: true, clients: [await client('far-op')] }),
    ])
    return {
      secret: SECRET,
      trustHost: true,
      logger,
      providers: [
        appProvider(op.issuer, 'client_secret_basic', 'op', { name: 'Test OP', [customFetch]: op.fetch }),
        appProvider(farOp.issuer, 'client_secret_basic', 'far-op', { name: 'Far OP' }),
      ],
    } as never
  })
  browser = await launchChromium([`--host-resolver-rules=MAP ${HOST} 127.0.0.1, MAP ${OP_HOST} 127.0.0.1`])
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await Promise.all([op?.close(), farOp?.close()])
})

async function newContext(): Promise<{ context: BrowserContext; page: Page }> {
  // Both certificates are self-signed; the connections are still HTTPS, so Secure cookies apply.
  const context = await browser.newContext({ ignoreHTTPSErrors: true })
  // A journey that does not come back fails here, with the URL it stopped at, before the test times out.
  context.setDefaultTimeout(10_000)
  return { context, page: await context.newPage() }
}

async function session(page: Page): Promise<{ user?: { name?: string } } | null> {
  await page.goto(`${app.origin}/`)
  return page.evaluate(async () => (await fetch('/auth/session')).json())
}

/** A browser signed in through `provider`'s login form. */
async function signedIn(provider: RunningOidcProvider, name: string): Promise<{ context: BrowserContext; page: Page }> {
  const { context, page } = await newContext()
  await page.goto(`${app.origin}/auth/signin`)
  await page.getByRole('button', { name: `Sign in with ${name}`, exact: true }).click()
  await page.waitForURL(`${provider.issuer}/interaction/**`)
  await page.fill('input[name=login]', OP_LOGIN.login)
  await page.fill('input[name=password]', OP_LOGIN.password)
  await Promise.all([page.waitForURL(`${app.origin}/`), page.getByRole('button', { name: 'Continue' }).click()])
  expect((await session(page))?.user?.name).toBe(OP_ACCOUNT.name)
  return { context, page }
}

/**
 * Signs out at `provider` as the user does there (its logout page, confirmed for every client of
 * the session), and returns our answer to the front-channel request its next page framed.
 */
async function signOutAt(provider: RunningOidcProvider, page: Page): Promise<PageResponse> {
  await page.goto(`${provider.issuer}/session/end`)
  const framed = page.waitForResponse((response) => response.url().startsWith(`${app.origin}${FRONT_CHANNEL}`))
  await page.evaluate(() => {
    const form = document.querySelector('form')!
    form.append(Object.assign(document.createElement('input'), { type: 'hidden', name: 'logout', value: 'yes' }))
    form.submit()
  })
  await expect.poll(() => page.textContent('h1').catch(() => null)).toBe('Signed out at the OP')
  return framed
}

const sessionCookie = async (context: BrowserContext) => (await context.cookies(app.origin)).find((c) => c.name === SESSION_COOKIE)

describe('front-channel logout in Chromium', () => {
  it("ends the session of the browser whose provider session ended, from the provider's frame; another browser's stays", async () => {
    const leaving = await signedIn(op, 'Test OP')
    const staying = await signedIn(op, 'Test OP')
    expect(await sessionCookie(leaving.context)).toMatchObject({ sameSite: 'Lax' })

    const framed = await signOutAt(op, leaving.page)
    const uri = new URL(framed.url())
    expect(uri.searchParams.get('iss')).toBe(op.issuer)
    expect(uri.searchParams.get('sid')).toEqual(expect.any(String))
    expect(framed.status()).toBe(200)
    expect(await framed.text()).toContain('You are signed out.')

    expect(await session(leaving.page), 'this browser is signed out').toBeNull()
    expect(await sessionCookie(leaving.context), 'and its cookie is gone').toBeUndefined()
    expect((await session(staying.page))?.user?.name, 'the same user in another browser, through another provider session').toBe(
      OP_ACCOUNT.name,
    )
    expect(logger.error).not.toHaveBeenCalled()
    await leaving.context.close()
    await staying.context.close()
  })

  it('ends nothing from a provider on another site: its frame arrives without the SameSite=Lax cookie', async () => {
    const far = await signedIn(farOp, 'Far OP')
    const framed = await signOutAt(farOp, far.page)
    expect(framed.status()).toBe(200)
    expect(await framed.text()).toContain('There was no session to end here.')
    expect((await session(far.page))?.user?.name, 'still signed in').toBe(OP_ACCOUNT.name)
    await far.context.close()
  })
})

describe('the front-channel page in Chromium', () => {
  it('renders, is never cached, and may be framed by the provider; a page of ours that forbids framing is not shown', async () => {
    const { context, page } = await signedIn(op, 'Test OP')
    const direct = await page.goto(`${app.origin}${FRONT_CHANNEL}op?iss=${encodeURIComponent(op.issuer)}&sid=another`)
    expect(direct!.status()).toBe(200)
    expect(direct!.headers()['cache-control']).toContain('no-store')
    expect(direct!.headers()['x-frame-options']).toBeUndefined()
    // Framed by the configured OpenID providers' origins only (this app has two).
    const ancestors = /; frame-ancestors ([^;]*)$/.exec(direct!.headers()['content-security-policy'] ?? '')?.[1]?.split(' ')
    expect(ancestors).toEqual([new URL(op.issuer).origin, new URL(farOp.issuer).origin])
    expect(await page.textContent('h1')).toBe('Sign out')
    expect(await page.textContent('p')).toBe('There was no session to end here.')

    const sessionsPage = await page.goto(`${app.origin}/auth/sessions`)
    expect(sessionsPage!.headers()['content-security-policy']).toMatch(/; frame-ancestors 'none'$/)
    expect(await page.textContent('h1'), 'shown when not framed').toBe('Your sessions')

    // The provider's origin frames the front-channel page and our sessions page (which forbids framing).
    await page.goto(`${op.issuer}/.well-known/openid-configuration`)
    const loaded = await page.evaluate(async (sources) => {
      const load = (src: string) =>
        new Promise<void>((resolve) => {
          const frame = Object.assign(document.createElement('iframe'), { src })
          frame.addEventListener('load', () => resolve())
          document.body.append(frame)
        })
      await Promise.all(sources.map(load))
      return sources.length
    }, [`${app.origin}${FRONT_CHANNEL}op?iss=x&sid=y`, `${app.origin}/auth/sessions`])
    expect(loaded).toBe(2)
    const frameAt = (path: string) => page.frames().find((f) => f.url().startsWith(`${app.origin}${path}`))
    expect(await frameAt(FRONT_CHANNEL)?.textContent('h1'), 'the front-channel page shows in the frame').toBe('Sign out')
    const sessionsFrame = page.frames().find((f) => f !== page.mainFrame() && !f.url().startsWith(`${app.origin}${FRONT_CHANNEL}`))
    const shown = await sessionsFrame?.evaluate(() => document.body?.innerText ?? '').catch(() => '')
    expect(shown ?? '', 'the sessions page is blocked in a frame').not.toContain('Your sessions')
    await context.close()
  })
})
