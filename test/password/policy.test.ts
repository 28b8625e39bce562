import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest'
import type { AdapterUser } from '../../core/shapes.js'
import { passwordLength, passwordPolicy } from '../../core/password/policy.js'

const BREACHED = 'password123'

function sha1(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase()
}

/** A stand-in for the range API on loopback: lists BREACHED, pads with zero-count lines. */
let server: Server
let base: string
let requests: { url: string; headers: IncomingHttpHeaders }[] = []
let answer: 'range' | 'error' | 'hang' = 'range'

beforeAll(async () => {
  server = createServer((request, response) => {
    requests.push({ url: request.url!, headers: request.headers })
    if (answer === 'error') return void response.writeHead(503).end()
    if (answer === 'hang') return
    const prefix = request.url!.split('/').at(-1)!
    const lines = ['0018A45C4D1DEF81644B54AB7F969B88D65:0', '00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2']
    if (sha1(BREACHED).startsWith(prefix)) lines.push(`${sha1(BREACHED).slice(5)}:24230577`)
    lines.push(`${sha1('padded but unseen').slice(5)}:0`)
    response.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/range`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  requests = []
  answer = 'range'
})

describe('length', () => {
  // Built in each call, inside the test: a policy that cannot be built then fails that test.
  const policy = (password: unknown) => passwordPolicy({ breachCheck: false })(password as string)

  it('accepts 8 to 128 characters and nothing else, with no composition rules', async () => {
    expect(await policy('abcdefgh')).toEqual({ ok: true })
    expect(await policy('a'.repeat(128))).toEqual({ ok: true })
    expect(await policy('abcdefg')).toMatchObject({ ok: false, reason: 'too_short' })
    expect(await policy('a'.repeat(129))).toMatchObject({ ok: false, reason: 'too_long' })
  })

  it('counts code points of the NFKC form, not UTF-16 units', async () => {
    expect(passwordLength('😀😀😀😀')).toBe(4)
    expect(passwordLength('e\u0301')).toBe(1)
    expect(await policy('😀😀😀😀😀😀😀')).toMatchObject({ ok: false, reason: 'too_short' })
    expect(await policy('😀😀😀😀😀😀😀😀')).toEqual({ ok: true })
  })

  it('takes other bounds and refuses impossible ones', async () => {
    const long = passwordPolicy({ breachCheck: false, minLength: 15, maxLength: 64 })
    expect(await long('a'.repeat(14))).toMatchObject({ ok: false, reason: 'too_short' })
    expect(await long('a'.repeat(65))).toMatchObject({ ok: false, reason: 'too_long' })
    expect(() => passwordPolicy({ minLength: 10, maxLength: 9 })).toThrow(RangeError)
    expect(() => passwordPolicy({ minLength: 0 })).toThrow(RangeError)
  })

  it('gives a message for pages beside each code', async () => {
    const result = await policy('short')
    expect(result).toEqual({ ok: false, reason: 'too_short', reasons: [{ code: 'too_short', message: 'Use at least 8 characters.' }] })
  })
})

describe('breached-password check', () => {
  it('refuses a listed password, sending only a five-digit prefix with padding asked for', async () => {
    const policy = passwordPolicy({ breachCheck: { url: base } })
    expect(await policy(BREACHED)).toMatchObject({ ok: false, reason: 'breached' })
    expect(requests).toHaveLength(1)
    expect(requests[0]!.url).toBe(`/range/${sha1(BREACHED).slice(0, 5)}`)
    expect(requests[0]!.headers['add-padding']).toBe('true')
    expect(JSON.stringify(requests)).not.toContain(sha1(BREACHED).slice(5))
  })

  it('accepts a password the range does not list, and one listed only as padding', async () => {
    const policy = passwordPolicy({ breachCheck: { url: base } })
    expect(await policy('a sound passphrase')).toEqual({ ok: true })
    expect(await policy('padded but unseen')).toEqual({ ok: true })
  })

  it('honours a minimum count', async () => {
    const policy = passwordPolicy({ breachCheck: { url: base, minimumCount: 100_000_000 } })
    expect(await policy(BREACHED)).toEqual({ ok: true })
  })

  it('fails closed with a clear reason when the API errors or does not answer', async () => {
    answer = 'error'
    expect(await passwordPolicy({ breachCheck: { url: base } })('a sound passphrase')).toMatchObject({
      ok: false,
      reason: 'breach_check_unavailable',
    })
    answer = 'hang'
    expect(await passwordPolicy({ breachCheck: { url: base, timeout: 200 } })('a sound passphrase')).toMatchObject({
      ok: false,
      reason: 'breach_check_unavailable',
    })
  })

  it('fails open only when the app says so, and says so in the log', async () => {
    answer = 'error'
    const warn = vi.fn()
    const policy = passwordPolicy({ breachCheck: { url: base, failOpen: true }, warn })
    expect(await policy('a sound passphrase')).toEqual({ ok: true })
    expect(warn).toHaveBeenCalledOnce()
    expect(warn.mock.calls[0]![0]).toMatch(/breached-password check skipped/)
    expect(warn.mock.calls[0]![0]).not.toContain('a sound passphrase')
  })

  it('does not ask the API about a password already refused by length', async () => {
    await passwordPolicy({ breachCheck: { url: base } })('short')
    expect(requests).toHaveLength(0)
  })
})

describe('the app’s own rule', () => {
  it('refuses with the app’s message and sees who the password is for', async () => {
    const check = vi.fn((password: string, context: { email?: string }) =>
      context.email && password.includes(context.email.split('@')[0]!) ? 'Do not use your address in the password.' : undefined,
    )
    const policy = passwordPolicy({ breachCheck: false, check })
    expect(await policy('alice-wonderland', { email: 'alice@example.com' })).toEqual({
      ok: false,
      reason: 'app_rule',
      reasons: [{ code: 'app_rule', message: 'Do not use your address in the password.' }],
    })
    expect(await policy('bob-the-builder', { email: 'alice@example.com' })).toEqual({ ok: true })
    expect(check).toHaveBeenCalledWith('bob-the-builder', { email: 'alice@example.com' })
  })

  it('reports every reason at once', async () => {
    const policy = passwordPolicy({ breachCheck: false, check: () => 'no' })
    const result = await policy('short')
    expect(result.ok === false && result.reasons.map((r) => r.code)).toEqual(['too_short', 'app_rule'])
  })
})

describe('as the password provider’s policy option', () => {
  it('fits the shape the password flows call: (password, { email, user }) → { ok } or { ok: false, reason }', async () => {
    type FlowPolicy = (
      password: string,
      context: { email: string; user: AdapterUser | null },
    ) => Promise<{ ok: true } | { ok: false; reason: string }>
    const policy = passwordPolicy({ breachCheck: false })
    expectTypeOf(policy).toMatchTypeOf<FlowPolicy>()
    const user: AdapterUser = { id: 'u1', email: 'a@example.com', emailVerified: null }
    expect(await policy('long enough', { email: 'a@example.com', user })).toEqual({ ok: true })
  })
})

describe('the policy’s edges', () => {
  const noBreachCheck = (options: Parameters<typeof passwordPolicy>[0] = {}) => passwordPolicy({ breachCheck: false, ...options })

  it('takes the tightest bounds there are: one character, and min equal to max', async () => {
    expect(await noBreachCheck({ minLength: 1, maxLength: 1 })('a')).toEqual({ ok: true })
    expect(await noBreachCheck({ minLength: 1, maxLength: 1 })('ab')).toMatchObject({ ok: false, reason: 'too_long' })
    expect(await noBreachCheck({ minLength: 12, maxLength: 12 })('a'.repeat(12))).toEqual({ ok: true })
  })

  it('refuses bounds that are not whole numbers, either one of them, and says which', () => {
    expect(() => noBreachCheck({ minLength: 8.5 })).toThrow(RangeError)
    expect(() => noBreachCheck({ maxLength: 64.5 })).toThrow(RangeError)
    expect(() => noBreachCheck({ maxLength: Number.NaN })).toThrow(RangeError)
    expect(() => noBreachCheck({ minLength: 10, maxLength: 9 })).toThrow('password policy: length bounds must satisfy 1 ≤ min ≤ max, got 10 and 9')
  })

  it('keeps the default bounds when only one of them is given', async () => {
    expect(await noBreachCheck({ minLength: 4 })('a'.repeat(128))).toEqual({ ok: true })
    expect(await noBreachCheck({ minLength: 4 })('a'.repeat(129))).toMatchObject({ ok: false, reason: 'too_long' })
    expect(await noBreachCheck({ maxLength: 20 })('a'.repeat(7))).toMatchObject({ ok: false, reason: 'too_short' })
    expect(await noBreachCheck({ maxLength: 20 })('a'.repeat(8))).toEqual({ ok: true })
  })

  it('gives the message of a password too long', async () => {
    expect(await noBreachCheck()('a'.repeat(129))).toEqual({
      ok: false,
      reason: 'too_long',
      reasons: [{ code: 'too_long', message: 'Use at most 128 characters.' }],
    })
  })

  it('refuses a password that is not a string as too short, without throwing and without the app’s rule seeing it', async () => {
    const check = vi.fn(() => undefined)
    for (const password of [undefined, null, 12345678, ['abcdefghij']]) {
      expect(await noBreachCheck({ check })(password as unknown as string)).toMatchObject({ ok: false, reason: 'too_short' })
    }
    expect(check).not.toHaveBeenCalled()
  })
})

describe('the breached-password check’s edges', () => {
  /** A fetch answering `body` (status 200) and recording the URLs asked. */
  function rangeFetch(body: string, status = 200) {
    const urls: string[] = []
    const stub = (async (url: string | URL | Request) => {
      urls.push(String(url))
      return new Response(body, { status })
    }) as typeof fetch
    return { urls, fetch: stub }
  }

  it('asks Have I Been Pwned’s range API by default', async () => {
    const range = rangeFetch('')
    // Imported afresh: the default is a module constant, read when the module loads.
    vi.resetModules()
    const fresh = await import('../../core/password/policy.js')
    expect(await fresh.passwordPolicy({ breachCheck: { fetch: range.fetch } })('a sound passphrase')).toEqual({ ok: true })
    expect(range.urls).toEqual([`https://api.pwnedpasswords.com/range/${sha1('a sound passphrase').slice(0, 5)}`])
  })

  it('is on by default, failing closed', async () => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch').mockRejectedValue(new TypeError('fetch failed'))
    try {
      expect(await passwordPolicy()('a sound passphrase')).toMatchObject({ ok: false, reason: 'breach_check_unavailable' })
      expect(fetchSpy).toHaveBeenCalledOnce()
    } finally {
      fetchSpy.mockRestore()
    }
  })

  it('drops the trailing slashes of a configured base', async () => {
    const policy = passwordPolicy({ breachCheck: { url: `${base}//` } })
    expect(await policy(BREACHED)).toMatchObject({ ok: false, reason: 'breached' })
    expect(requests.map((r) => r.url)).toEqual([`/range/${sha1(BREACHED).slice(0, 5)}`])
  })

  it('reads lines with surrounding spaces and lower-case suffixes', async () => {
    const suffix = sha1(BREACHED).slice(5)
    for (const body of [`  ${suffix}:3  \n`, `${suffix.toLowerCase()}:3\r\n`]) {
      expect(await passwordPolicy({ breachCheck: { fetch: rangeFetch(body).fetch } })(BREACHED)).toMatchObject({ ok: false, reason: 'breached' })
    }
  })

  it('refuses a password seen exactly the minimum count of times', async () => {
    const policy = passwordPolicy({ breachCheck: { url: base, minimumCount: 24230577 } })
    expect(await policy(BREACHED)).toMatchObject({ ok: false, reason: 'breached' })
    expect(await passwordPolicy({ breachCheck: { url: base, minimumCount: 24230578 } })(BREACHED)).toEqual({ ok: true })
  })

  it('gives the messages of a breached password and of a check that could not run', async () => {
    expect(await passwordPolicy({ breachCheck: { url: base } })(BREACHED)).toEqual({
      ok: false,
      reason: 'breached',
      reasons: [{ code: 'breached', message: 'This password has appeared in a data breach. Choose another one.' }],
    })
    answer = 'error'
    expect(await passwordPolicy({ breachCheck: { url: base } })('a sound passphrase')).toEqual({
      ok: false,
      reason: 'breach_check_unavailable',
      reasons: [{ code: 'breach_check_unavailable', message: 'The password could not be checked right now. Try again in a moment.' }],
    })
  })

  it('logs the API’s status when failing open, to console.warn by default', async () => {
    answer = 'error'
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      expect(await passwordPolicy({ breachCheck: { url: base, failOpen: true } })('a sound passphrase')).toEqual({ ok: true })
      expect(warn).toHaveBeenCalledOnce()
      expect(warn.mock.calls[0]![0]).toBe('password policy: breached-password check skipped (failOpen): range API answered 503')
    } finally {
      warn.mockRestore()
    }
  })
})
