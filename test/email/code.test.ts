/**
 * One-time codes: sent with the link, typed on the verify-request page of the browser that asked,
 * hashed at rest, spent with the token, and limited by a counter kept on the server, so that
 * replaying an older flow cookie (on one instance or on many) never buys more guesses.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore } from '../../adapters/memory.js'
import { memoryAuthStore } from '../../core/index.js'
import { openEnvelope } from '../../core/engine/envelope.js'
import { emailSignInFlow } from '../../core/flows/email/flow.js'
import { authRequest, CookieJar, ORIGIN, SECRET, setCookie } from '../fixtures/http.js'
import { emailConfig, EmailClient, lastLink } from './helpers.js'

const FLOW_COOKIE = '__Secure-authchart.flow.email-signin'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const VERIFY_REQUEST = `${ORIGIN}/auth/verify-request?provider=email&type=email`
const VERIFICATION = `${ORIGIN}/auth/error?error=Verification`

afterEach(() => {
  vi.useRealTimers()
})

/** A code that is not `code` (same alphabet, same length). */
const wrong = (code: string) => (code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ')

describe('one-time codes', () => {
  it('sends a 6-character code with the link and signs in the browser that types it', async () => {
    const { config, outbox, store } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    const asked = await client.requestLink('alice@example.com', { callbackUrl: '/inbox' })
    expect(asked.headers.get('location')).toBe(VERIFY_REQUEST)
    expect(setCookie(asked, FLOW_COOKIE)).toBeDefined()
    const { code, expires } = outbox[0]!
    expect(code).toMatch(/^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{6}$/)
    // Codes expire with the token: ten minutes by default.
    expect(expires.getTime() - Date.now()).toBeLessThanOrEqual(600_000)
    expect(expires.getTime() - Date.now()).toBeGreaterThan(590_000)

    const page = await (await client.send({ path: '/verify-request', query: { provider: 'email', type: 'email' } })).text()
    expect(page).toContain(`action="${ORIGIN}/auth/callback/email"`)
    expect(page).toContain('name="code"')
    expect(page).toContain('autocomplete="one-time-code"')

    // Typed in lower case with a space: still the code.
    const typed = `${code!.slice(0, 3).toLowerCase()} ${code!.slice(3)}`
    const signedIn = await client.enterCode(typed)
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/inbox`)
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
    expect(client.jar.get(FLOW_COOKIE)).toBeUndefined()
    // The token is spent with the code: the link no longer works.
    expect(store.verificationTokens.size).toBe(0)
    expect((await new EmailClient(config).confirm(lastLink(outbox))).headers.get('location')).toBe(VERIFICATION)
  })

  it('puts the code in the default message, text and HTML', async () => {
    const { html, text } = await import('../../core/email/message.js')
    const params = { url: `${ORIGIN}/auth/callback/email?token=t`, host: 'authchart.test', theme: {}, code: 'K7Q2XM' }
    expect(text(params)).toBe(`Sign in to authchart.test\n${params.url}\n\nOr enter this code on the sign-in page: K7Q2XM\n\n`)
    expect(html(params)).toContain('K7Q2XM</strong>')
  })

  it('offers digits when asked, at least 7 of them', async () => {
    const { config, outbox } = emailConfig({ provider: { code: { alphabet: 'digits', length: 8 } } })
    await new EmailClient(config).requestLink('alice@example.com')
    expect(outbox[0]!.code).toMatch(/^\d{8}$/)
  })

  it('says a code was wrong, keeps the flow, and accepts the right one next', async () => {
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const { code } = outbox[0]!
    const rejected = await client.enterCode(wrong(code!))
    expect(rejected.headers.get('location')).toBe(`${VERIFY_REQUEST}&error=InvalidCode`)
    expect(setCookie(rejected, FLOW_COOKIE)).toBeDefined()
    const page = await (await client.send({ path: '/verify-request', query: { provider: 'email', type: 'email', error: 'InvalidCode' } })).text()
    expect(page).toContain('That code is not right')
    const signedIn = await client.enterCode(code!)
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
  })

  it('voids the token after five wrong codes: neither the right code nor the link works then', async () => {
    const { config, outbox, store } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const { code } = outbox[0]!
    for (let attempt = 1; attempt <= 4; attempt++) {
      expect((await client.enterCode(wrong(code!))).headers.get('location')).toBe(`${VERIFY_REQUEST}&error=InvalidCode`)
    }
    const fifth = await client.enterCode(wrong(code!))
    expect(fifth.headers.get('location')).toBe(VERIFICATION)
    expect(store.verificationTokens.size).toBe(0)
    expect(client.jar.get(FLOW_COOKIE)).toBeUndefined()
    expect((await new EmailClient(config).confirm(lastLink(outbox))).headers.get('location')).toBe(VERIFICATION)
  })

  it('refuses a replayed flow cookie outright on the instance that already opened it', async () => {
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const earlier = client.jar.get(FLOW_COOKIE)!
    await client.enterCode(wrong(outbox[0]!.code!))
    client.jar.cookies.set(FLOW_COOKIE, earlier)
    const replayed = await client.enterCode(outbox[0]!.code!)
    expect(replayed.headers.get('location')).toBe(VERIFICATION)
    expect(setCookie(replayed, SESSION_COOKIE)).toBeUndefined()
  })

  it('refuses the same earlier flow cookie on every other instance that shares the store, so replays buy no guesses', async () => {
    // Five instances behind a load balancer: each its own process memory (fresh modules), one
    // shared store and one shared database, as a deployment with a shared store runs.
    const shared = { store: memoryAuthStore(), database: createMemoryStore() }
    const { config, outbox } = emailConfig({ store: shared.database, provider: { code: true }, overrides: { store: shared.store } })
    const first = new EmailClient(config)
    await first.requestLink('alice@example.com')
    const cookie = first.jar.get(FLOW_COOKIE)!
    const { code } = outbox[0]!

    const instance = async () => {
      vi.resetModules()
      const { Auth } = await import('../../core/index.js')
      return Auth
    }
    let current = ''
    const post = async (Auth: Awaited<ReturnType<typeof instance>>, body: Record<string, string>, flowCookie = cookie) => {
      const jar = new CookieJar({ [FLOW_COOKIE]: flowCookie })
      const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: jar }), config)
      jar.store(csrf)
      const { csrfToken } = (await csrf.json()) as { csrfToken: string }
      const response = await Auth(authRequest({ path: '/auth/callback/email', body: { ...body, csrfToken }, cookies: jar }), config)
      current ||= setCookie(response, FLOW_COOKIE)?.value ?? ''
      return response
    }
    const outcomes: string[] = []
    for (let attempt = 1; attempt <= 5; attempt++) {
      outcomes.push((await post(await instance(), { code: wrong(code!) })).headers.get('location')!)
    }
    expect(outcomes).toEqual([`${VERIFY_REQUEST}&error=InvalidCode`, ...Array(4).fill(VERIFICATION)])
    const right = await post(await instance(), { code: code! })
    expect(right.headers.get('location')).toBe(VERIFICATION)
    expect(setCookie(right, SESSION_COOKIE)).toBeUndefined()
    // The browser that holds the flow cookie sealed after the first wrong code still signs in.
    expect(current).not.toBe('')
    const genuine = await post(await instance(), { code: code! }, current)
    expect(setCookie(genuine, SESSION_COOKIE)).toBeTruthy()
    expect(shared.database.verificationTokens.size).toBe(0)
  })

  it('refuses a code typed in a browser that did not ask for it', async () => {
    const { config, outbox } = emailConfig({ provider: { code: true } })
    await new EmailClient(config).requestLink('alice@example.com')
    const other = new EmailClient(config)
    const response = await other.enterCode(outbox[0]!.code!)
    expect(response.headers.get('location')).toBe(VERIFICATION)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
  })

  it('refuses the right code once it has expired, and the log says it expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    vi.setSystemTime(Date.now() + 601_000)
    const response = await client.enterCode(outbox[0]!.code!)
    expect(response.headers.get('location')).toBe(VERIFICATION)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    // The link token's own expiry would refuse it too: the log says the code's check refused it.
    expect(loggedText(config.logger)).toMatch(/one-time code has expired/)
  })

  it('keeps only hashes of the code and token in the sealed flow', async () => {
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const { code, token } = outbox[0]!
    const snapshot = await openEnvelope(emailSignInFlow as never, client.jar.get(FLOW_COOKIE)!, {
      secrets: [SECRET],
      cookieName: FLOW_COOKIE,
      at: Math.floor(Date.now() / 1000),
      binding: 'email',
    })
    const sealed = JSON.stringify(snapshot.context)
    expect(snapshot.value).toBe('awaitingCode')
    expect(sealed).not.toContain(code!)
    expect(sealed).not.toContain(token)
    expect(snapshot.context.codeHash).toMatch(/^[0-9a-f]{64}$/)
  })
})

/** Everything `logger` was given, errors with their message, stack and causes, as one string. */
function loggedText(logger: { error: { mock: { calls: unknown[][] } }; warn: { mock: { calls: unknown[][] } }; debug: { mock: { calls: unknown[][] } } }): string {
  const seen = new Set<unknown>()
  const text = (value: unknown): string => {
    if (value === null || typeof value !== 'object') return String(value)
    if (seen.has(value)) return ''
    seen.add(value)
    const own = Object.entries(value).map(([key, inner]) => `${key}=${text(inner)}`)
    if (value instanceof Error) own.push(value.message, value.stack ?? '', text(value.cause))
    return own.join(' ')
  }
  return [logger.error, logger.warn, logger.debug].flatMap((spy) => spy.mock.calls.map((args) => args.map(text).join(' '))).join('\n')
}

describe('one-time codes and the log', () => {
  it('never writes the code, the token or the link to the log, through a wrong code and the right one', async () => {
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const { code, token } = outbox[0]!
    await client.enterCode(wrong(code!))
    const signedIn = await client.enterCode(code!)
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
    expect(config.logger.debug.mock.calls.length + config.logger.error.mock.calls.length, 'the flow logged').toBeGreaterThan(0)
    const logged = loggedText(config.logger)
    expect(logged).not.toContain(code!)
    expect(logged).not.toContain(token)
  })

  it("logs a mailer's refusal with the code and token redacted, even when the mailer's error quotes them", async () => {
    let sent: { code?: string; token: string } | undefined
    const { config } = emailConfig({
      provider: {
        code: true,
        sendVerificationRequest: async (params) => {
          sent = params
          throw new Error(`550 rejected message with code ${params.code} for ${params.url} (token ${params.token})`)
        },
      },
    })
    const response = await new EmailClient(config).requestLink('alice@example.com')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    expect(sent?.code).toMatch(/^[0-9A-Z]{6}$/)
    const logged = loggedText(config.logger)
    expect(logged).toContain('550 rejected message')
    expect(logged).toContain('[redacted]')
    expect(logged).not.toContain(sent!.code!)
    expect(logged).not.toContain(sent!.token)
  })
})
