/**
 * Clickjacking and script injection on the built-in pages (issue #48 item 8), at the HTTP level:
 * every page is sent with `frame-ancestors 'none'`, `X-Frame-Options: DENY` and a `script-src`
 * of hashes only, and every inline script a page carries is one of those hashes (so the policy
 * breaks no page). The front-channel logout page, which the provider frames, may be framed by the
 * configured OpenID providers' origins only. Chromium checks the same from the browser's side in
 * test/browser/page-framing.browser.test.ts.
 */
import { createHash } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { pagePolicy, sha256Base64, undeclaredScripts } from '../../core/pages/policy.js'
import type { AuthConfig } from '../../core/types.js'
import Passkey from '../../providers/passkey.js'
import { authRequest, Client, credentialsProvider, featureConfig, ORIGIN } from '../fixtures/http.js'
import { appProvider } from '../oauth/helpers.js'

const HTML = { accept: 'text/html' }
const ELEVEN_MINUTES = 11 * 60 * 1000
const OP_ISSUER = 'https://op.example/realms/main'

function config(): AuthConfig {
  return featureConfig({
    adapter: MemoryAdapter(createMemoryStore()),
    session: { strategy: 'database' },
    experimental: { enableWebAuthn: true },
    providers: [credentialsProvider(), Passkey(), appProvider(OP_ISSUER, 'client_secret_basic', 'op')] as never,
  })
}

/** The page is unframeable and runs only the scripts the policy lists. */
async function expectGuarded(response: Response, name: string): Promise<string> {
  expect(response.headers.get('content-type'), name).toMatch(/^text\/html/)
  const policy = response.headers.get('content-security-policy') ?? ''
  expect(policy, name).toMatch(/(^|; )frame-ancestors 'none'(;|$)/)
  expect(response.headers.get('x-frame-options'), name).toBe('DENY')
  const scriptSrc = /(?:^|; )script-src ([^;]*)/.exec(policy)?.[1] ?? ''
  expect(scriptSrc, `${name}: a script policy`).not.toBe('')
  expect(scriptSrc, name).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:|data:/)
  const html = await response.text()
  expect(undeclaredScripts(html), `${name}: every inline script is allowed by hash`).toEqual([])
  for (const [, body] of html.matchAll(/<script>([\s\S]*?)<\/script>/g)) {
    expect(scriptSrc, name).toContain(`'sha256-${createHash('sha256').update(body!).digest('base64')}'`)
  }
  return html
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('every built-in page refuses to be framed and runs only our scripts', () => {
  it('the sign-in page (credentials and passkey forms, their scripts), sign-out, error and verify-request pages', async () => {
    const app = config()
    const get = (path: string) => Auth(authRequest({ path }), app as Omit<AuthConfig, 'raw'>)
    const signIn = await expectGuarded(await get('/auth/signin'), 'sign-in')
    expect(signIn, 'the passkey script is on the page').toContain('SimpleWebAuthnBrowser')
    await expectGuarded(await get('/auth/signout'), 'sign-out')
    await expectGuarded(await get('/auth/error?error=Verification'), 'error')
    await expectGuarded(await get('/auth/error?error=WebAuthnVerificationError'), 'passkey error')
    await expectGuarded(await get('/auth/verify-request'), 'verify-request')
  })

  it('the re-authentication step, the page that resumes the action, the two-step and sessions pages', async () => {
    const client = new Client(config())
    await client.signIn({ username: 'alice', password: 'wonderland' })
    await expectGuarded(await client.send({ path: '/sessions', headers: HTML }), 'sessions')
    await expectGuarded(await client.send({ path: '/two-factor', headers: HTML }), 'two-factor')
    vi.setSystemTime(Date.now() + ELEVEN_MINUTES)
    const asked = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() }, headers: HTML })
    expect(asked.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
    const step = await expectGuarded(await client.send({ path: '/step/reauthenticate', headers: HTML }), 're-authentication')
    expect(step).toContain('name="password"')
    const resumed = await client.send({
      path: '/step/reauthenticate',
      body: { event: 'reauth.password', username: 'alice', password: 'wonderland', csrfToken: await client.csrfToken() },
      headers: HTML,
    })
    const resume = await expectGuarded(resumed, 'resume')
    expect(resume, 'the resume page posts itself by script').toContain("getElementById('resume').submit()")
    const enrolment = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() }, headers: HTML })
    expect([302, 303], 'the enrolment starts on its step page').toContain(enrolment.status)
    const enrolPath = new URL(enrolment.headers.get('location')!).pathname
    expect(enrolPath).toMatch(/^\/auth\/step\//)
    const enrolPage = await expectGuarded(await client.send({ path: enrolPath.slice('/auth'.length), headers: HTML }), 'two-step enrolment')
    expect(enrolPage).toContain('<form')
  })

  it("the front-channel logout page may be framed by the OpenID provider's origin only, with no X-Frame-Options", async () => {
    const app = config()
    const response = await Auth(authRequest({ path: '/auth/frontchannel-logout/op', query: { iss: OP_ISSUER, sid: 's-1' } }), app as Omit<AuthConfig, 'raw'>)
    // The issuer is not reachable here, so the page says there was nothing to end (400): the
    // page and its headers are what is checked.
    const policy = response.headers.get('content-security-policy') ?? ''
    expect(policy).toMatch(/(^|; )frame-ancestors https:\/\/op\.example(;|$)/)
    expect(policy).not.toContain("frame-ancestors 'none'")
    expect(response.headers.get('x-frame-options')).toBeNull()
    const html = await response.text()
    expect(html).toContain('There was no session to end here.')
    expect(undeclaredScripts(html)).toEqual([])
  })
})

describe('the page policy', () => {
  it('hashes as the browser does (SHA-256 of the UTF-8 text, base64), for every padding length', () => {
    for (const text of ['', 'a', 'é€𝄞', 'x'.repeat(55), 'x'.repeat(56), 'x'.repeat(64), 'y'.repeat(1000)]) {
      expect(sha256Base64(text), JSON.stringify(text.slice(0, 8))).toBe(createHash('sha256').update(text, 'utf8').digest('base64'))
    }
  })

  it('reports a script it was not told about, and ignores a JSON data block', () => {
    expect(undeclaredScripts('<script>alert(1)</script>')).toEqual([`'sha256-${sha256Base64('alert(1)')}'`])
    expect(undeclaredScripts('<script type="application/json">{"a":1}</script>')).toEqual([])
  })

  it('lets an origin list frame a page, and no one by default', () => {
    expect(pagePolicy()).toMatch(/frame-ancestors 'none'$/)
    expect(pagePolicy(['https://a.example', 'https://b.example'])).toMatch(/frame-ancestors https:\/\/a\.example https:\/\/b\.example$/)
    expect(pagePolicy([])).toMatch(/frame-ancestors 'none'$/)
  })
})
