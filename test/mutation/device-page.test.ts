/**
 * The device approval page as its markup says it, each part a mutant of the device-authorization
 * group survived: the code form (where it goes, what it asks), the confirmation (who, what, when,
 * from where, the two forms and what they post), the refusals' words and their `Retry-After`, and
 * the audit events of an answer.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { auditTrail } from '../../core/audit.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { Auth } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, ORIGIN } from '../fixtures/http.js'
import { answer, deviceWorld, openPage, requestCodes, USERS } from '../device-authorization/fixture.js'

const AT = Date.UTC(2026, 11, 4, 21, 7, 9, 250)

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(AT)
})
afterEach(() => {
  vi.useRealTimers()
})

describe('the code form', () => {
  it('asks for the code with a GET form to the page itself, and nothing else', async () => {
    const { alice } = await deviceWorld()
    const { response, html } = await openPage(alice)
    expect(response.status).toBe(200)
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    expect(html).toContain('<title>Sign in a device</title>')
    expect(html).toContain('<h1>Sign in a device</h1>')
    expect(html).not.toContain('role="alert"')
    expect(html).toContain(`<form action="${ORIGIN}/auth/device" method="GET">`)
    expect(html).toContain('<label class="section-header" for="input-user-code">Enter the code shown on your device</label>')
    expect(html).toMatch(/<input id="input-user-code" name="user_code" type="text"[^>]* required>/)
    expect(html).toContain('<button id="continueButton" type="submit">Continue</button></form>')
  })

  it('sends a signed-out browser to sign in, coming back to the code', async () => {
    const { config } = await deviceWorld()
    const response = await Auth(authRequest({ path: '/auth/device', query: { user_code: 'BCDF-GHJK' } }), config as Omit<AuthConfig, 'raw'>)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?${new URLSearchParams({ callbackUrl: `${ORIGIN}/auth/device?user_code=BCDF-GHJK` })}`)
    const bare = await Auth(authRequest({ path: '/auth/device' }), config as Omit<AuthConfig, 'raw'>)
    expect(bare.headers.get('location')).toBe(`${ORIGIN}/auth/signin?${new URLSearchParams({ callbackUrl: `${ORIGIN}/auth/device` })}`)
  })

  it('says why a code is refused, and when to come back after too many', async () => {
    const { config, alice } = await deviceWorld({ device: { userCodeLimit: { perUser: 1, window: 900 } } })
    const wrong = await openPage(alice, 'BCDF-GHJK')
    expect(wrong.html).toContain('<div class="error" role="alert"><p>That code is not valid, or it has expired. Check the code on your device and try again.</p></div>')
    const { issued } = await requestCodes(config)
    const limited = await openPage(alice, issued.user_code)
    expect(limited.response.headers.get('retry-after')).toBe('900')
    expect(limited.html).toContain('Too many codes were entered. Try again in 15 minutes.')
    const posted = await answer(alice, 'approve', issued.user_code)
    expect(posted.response.status).toBe(429)
    expect(posted.response.headers.get('retry-after')).toBe('900')
    expect(posted.html).toContain('Try again in 15 minutes.')
  })

  it('refuses an answer that is neither approve nor deny', async () => {
    const { alice } = await deviceWorld()
    const response = await alice.send({ method: 'POST', path: '/device', body: { action: 'maybe', user_code: 'BCDF-GHJK', csrfToken: await alice.csrfToken() } })
    expect(response.status).toBe(400)
    expect(await response.text()).toContain('Choose to approve or deny the request.')
  })
})

describe('the confirmation', () => {
  it('shows who is signed in, the client, the access, when and from where, and two forms that post the code back', async () => {
    const { config, alice } = await deviceWorld()
    const { issued } = await requestCodes(config, 'acme-tv', 'videos:watch profile')
    const { html } = await openPage(alice, issued.user_code.toLowerCase())
    expect(html).toContain('<h1>Sign in Acme TV?</h1>')
    expect(html).toContain(`signed in as <strong class="address">${USERS.alice.email}</strong> with the code <strong class="user-code">${issued.user_code}</strong>.`)
    expect(html).toContain('<dd class="scopes"><code>videos:watch</code> <code>profile</code></dd>')
    expect(html).toContain('<dd class="asked-at">2026-12-04 21:07:09 UTC</dd>')
    expect(html).toContain('<dd class="asked-from">an unknown address</dd>')
    expect(html).toContain('<dd class="asked-by">AcmeCLI/2.1 (linux)</dd>')
    expect(html).toContain('<p>Approve only if you started this on a device of yours just now.</p>')
    const action = `${ORIGIN}/auth/device?user_code=${issued.user_code}`
    for (const [value, label] of [
      ['approve', 'Approve'],
      ['deny', 'Deny'],
    ]) {
      expect(html).toMatch(
        new RegExp(
          `<form action="${action.replace(/[.?]/g, '\\$&')}" method="POST"><input type="hidden" name="csrfToken" value="[0-9a-f]+">` +
            `<input type="hidden" name="action" value="${value}"><input type="hidden" name="user_code" value="${issued.user_code}">` +
            `<button id="${value}Button" type="submit"><span>${label}</span></button></form>`,
        ),
      )
    }
  })

  it('names the access "Your account" when no scope was asked', async () => {
    const { config, alice } = await deviceWorld()
    const { issued } = await requestCodes(config)
    expect((await openPage(alice, issued.user_code)).html).toContain('<dd class="scopes">Your account</dd>')
  })

  it('answers each end in words, and audits the approval and the denial with the user', async () => {
    const events: AuditEvent[] = []
    const { config, alice, bob } = await deviceWorld({ config: { audit: auditTrail({ sink: (event) => void events.push(event) }) } })
    const first = (await requestCodes(config)).issued
    const second = (await requestCodes(config)).issued
    expect((await answer(alice, 'approve', first.user_code)).html).toContain('<h1>Device signed in</h1><p class="device-approved">You can go back to your device: it is signed in as you.</p>')
    expect((await answer(bob, 'deny', second.user_code)).html).toContain('<h1>Request denied</h1><p class="device-denied">The device was not signed in.</p>')
    await vi.waitFor(() => expect(events.filter((event) => event.kind === 'device-authorization-denied')).toHaveLength(1))
    expect(events.filter((event) => event.kind === 'device-authorization-approved').map((event) => event.userId)).toEqual([USERS.alice.id])
    expect(events.filter((event) => event.kind === 'device-authorization-denied').map((event) => event.userId)).toEqual([USERS.bob.id])
  })

  it('says an answer could not be given while the store is down', async () => {
    let broken = false
    const { config, alice } = await deviceWorld({
      store: (inner) => ({ ...inner, claim: (key, ttl) => (broken && key.includes(':settle:') ? Promise.reject(new TypeError('down')) : inner.claim(key, ttl)) }),
    })
    const { issued } = await requestCodes(config)
    broken = true
    const { response, html } = await answer(alice, 'approve', issued.user_code)
    expect(response.status).toBe(503)
    expect(html).toContain('<h1>Try again later</h1><p>The request could not be answered just now. Nothing was approved.</p>')
  })
})
