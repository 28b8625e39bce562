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
  const policy = passwordPolicy({ breachCheck: false })

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
