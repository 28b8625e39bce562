/**
 * Issue #43 item 8, the TOTP parts, at the level of the pages: one sentence for a wrong code on
 * every page that takes a code, a reused code and a paused client said as what they are, no
 * backup codes offered at setup (none exist yet), and the code field focused once a code is sent.
 */
import { describe, expect, it } from 'vitest'
import { renderVerifyRequestPage } from '../../core/pages/index.js'
import { CODE_MESSAGES } from '../../core/pages/messages.js'
import { CODE_MESSAGES as FROM_NOTICES } from '../../core/pages/notices.js'
import { secondFactorPage, totpEnrolmentPage } from '../../core/pages/steps.js'
import { passkeyScripts } from '../../core/pages/webauthn.js'
import type { StepView } from '../../core/types.js'

const view = (error: string | null, data: Record<string, unknown> = {}): StepView =>
  ({ action: '/auth/step/x', csrfToken: 't', error, user: null, data, theme: {} as StepView['theme'] }) as StepView

const escaped = (text: string) => text.replace(/'/g, '&#39;').replace(/"/g, '&quot;')
const has = (html: string, text: string) => html.includes(text) || html.includes(escaped(text))

describe('the code messages', () => {
  it('are one set, the one the notices module offers', () => {
    expect(FROM_NOTICES).toBe(CODE_MESSAGES)
    expect(new Set(Object.values(CODE_MESSAGES)).size).toBe(Object.keys(CODE_MESSAGES).length)
  })

  it('say a wrong code in the same words at sign-in, at setup, for an e-mailed code and on the passkey page', () => {
    expect(has(secondFactorPage(view('InvalidCode')).html, CODE_MESSAGES.wrongCode)).toBe(true)
    expect(has(totpEnrolmentPage(view('InvalidCode', { secret: 'ABC', qr: '' })).html, CODE_MESSAGES.wrongCode)).toBe(true)
    const verify = renderVerifyRequestPage({ theme: {} as never, url: new URL('https://a.test/auth'), code: { actionUrl: '/auth/callback/email', csrfToken: 't', length: 6, rejected: true } })
    expect(has(verify.html, CODE_MESSAGES.wrongCode)).toBe(true)
    expect(passkeyScripts('https://a.test/auth', [{ id: 'passkey', name: 'Passkey' } as never])).toContain(JSON.stringify(CODE_MESSAGES.wrongCode))
    for (const old of ['Try the current code from your app', 'Check the e-mail and try again']) {
      expect(secondFactorPage(view('InvalidCode')).html).not.toContain(old)
      expect(verify.html).not.toContain(old)
    }
  })

  it('offer no backup code at setup, where none exist yet', () => {
    for (const error of [null, 'InvalidCode']) {
      expect(totpEnrolmentPage(view(error, { secret: 'ABC', qr: '' })).html.toLowerCase()).not.toContain('backup code')
    }
  })

  it('say a reused code was already used, and a paused client that someone is trying codes', () => {
    const used = secondFactorPage(view('CodeUsed')).html
    expect(has(used, CODE_MESSAGES.codeUsed)).toBe(true)
    expect(used).not.toContain(CODE_MESSAGES.wrongCode)
    expect(has(secondFactorPage(view('TooManyAttempts')).html, CODE_MESSAGES.codesTried)).toBe(true)
  })

  it('focus the code field once a code is sent', () => {
    expect(secondFactorPage(view(null)).html).toMatch(/<input id="code"[^>]* autofocus/)
    const verify = renderVerifyRequestPage({ theme: {} as never, url: new URL('https://a.test/auth'), code: { actionUrl: '/auth/callback/email', csrfToken: 't', length: 6, rejected: false } })
    expect(verify.html).toMatch(/<input id="input-code"[^>]* autofocus/)
    expect(verify.html.match(/autofocus/g)).toHaveLength(1)
  })
})
