/**
 * Attacks on e-mail sign-in, from the attacker's side: a forged host, replayed links and codes, a
 * token presented for another address, a confirmation without its CSRF token, a hammered code
 * endpoint, floods of sends, control characters in the address. Each ends without a session, with
 * a client error or the spec's error redirect, and with no token or code in clear in a log line,
 * a database row or a store key.
 */
import { describe, expect, it } from 'vitest'
import { Auth, memoryAuthStore, type AuthStore } from '../../core/index.js'
import { authRequest, ORIGIN, setCookie } from '../fixtures/http.js'
import type { AuthConfig } from '../../core/types.js'
import { emailConfig, EmailClient, lastLink, type Outbox } from './helpers.js'

const FLOW_COOKIE = '__Secure-authchart.flow.email-signin'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const VERIFY_REQUEST = `${ORIGIN}/auth/verify-request?provider=email&type=email`
const VERIFICATION = `${ORIGIN}/auth/error?error=Verification`
const EMAIL_SIGNIN = `${ORIGIN}/auth/signin?error=EmailSignin`

describe('a forged host', () => {
  it('is refused before anything is sent unless the host is trusted', async () => {
    const { config, outbox } = emailConfig({ overrides: { trustHost: false } })
    const response = await Auth(authRequest({ path: '/auth/signin/email', body: { email: 'alice@example.com' } }), config)
    expect(response.status).toBe(500)
    expect(config.logger.error.mock.calls[0]![0].type).toBe('UntrustedHost')
    expect(outbox).toHaveLength(0)
  })

  it('never moves the link to a host named in X-Forwarded-Host or Forwarded', async () => {
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    const csrfToken = await client.csrfToken()
    await client.send({
      path: '/signin/email',
      body: { email: 'victim@example.com', csrfToken },
      headers: { 'x-forwarded-host': 'evil.example', forwarded: 'host=evil.example', 'x-forwarded-proto': 'http' },
    })
    expect(lastLink(outbox).origin).toBe(ORIGIN)
  })

  it('keeps a callbackUrl on another origin out of the link', async () => {
    const { config, outbox } = emailConfig()
    await new EmailClient(config).requestLink('victim@example.com', { callbackUrl: 'https://evil.example/steal' })
    expect(lastLink(outbox).searchParams.get('callbackUrl')).toBe(ORIGIN)
  })
})

describe('replays', () => {
  it('spends a link once: the second confirmation, even concurrent, gets Verification', async () => {
    const { config, outbox } = emailConfig()
    await new EmailClient(config).requestLink('alice@example.com')
    const link = lastLink(outbox)
    const first = await new EmailClient(config).confirm(link)
    expect(setCookie(first, SESSION_COOKIE)).toBeDefined()
    const replay = await new EmailClient(config).confirm(link)
    expect(replay.headers.get('location')).toBe(VERIFICATION)
    expect(setCookie(replay, SESSION_COOKIE)).toBeUndefined()
  })

  it('spends a code once: replaying the successful request signs nobody in', async () => {
    const { config, outbox } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const cookie = client.jar.get(FLOW_COOKIE)!
    const signedIn = await client.enterCode(outbox[0]!.code!)
    expect(setCookie(signedIn, SESSION_COOKIE)).toBeDefined()
    const attacker = new EmailClient(config)
    attacker.jar.cookies.set(FLOW_COOKIE, cookie)
    const replay = await attacker.enterCode(outbox[0]!.code!)
    expect(replay.status).toBe(302)
    expect(replay.headers.get('location')).toBe(VERIFICATION)
    expect(setCookie(replay, SESSION_COOKIE)).toBeUndefined()
  })
})

describe('a token for another address', () => {
  /** The attacker asks for a link of their own, names the victim in it, and confirms it. */
  async function confirmForVictim(config: AuthConfig, outbox: Outbox): Promise<Response> {
    const attacker = new EmailClient(config)
    await attacker.requestLink('attacker@example.com')
    const forged = lastLink(outbox)
    forged.searchParams.set('email', 'victim@example.com')
    const response = await attacker.confirm(forged)
    expect(response.headers.get('location')).toBe(VERIFICATION)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    return response
  }

  it('is refused with Verification when the link names someone else', async () => {
    const { config, outbox, store } = emailConfig()
    await confirmForVictim(config, outbox)
    expect(store.users.size).toBe(0)
  })

  it('is refused even by an adapter that ignores the identifier (as Auth.js’s own memory adapter does)', async () => {
    const { config, outbox, adapter } = emailConfig()
    const rows = new Map<string, { identifier: string; token: string; expires: Date }>()
    const careless = {
      ...adapter,
      createVerificationToken: async (row: { identifier: string; token: string; expires: Date }) => {
        rows.set(row.token, row)
        return row
      },
      useVerificationToken: async ({ token }: { token: string }) => {
        const row = rows.get(token) ?? null
        rows.delete(token)
        return row
      },
    }
    await confirmForVictim({ ...config, adapter: careless }, outbox)
    // The careless adapter handed the row over (and spent it); the identifier check refused it.
    expect(rows.size).toBe(0)
  })
})

describe('the confirmation without its CSRF token', () => {
  it('answers MissingCSRF and leaves the link usable', async () => {
    const { config, outbox, store } = emailConfig()
    await new EmailClient(config).requestLink('alice@example.com')
    const link = lastLink(outbox)
    const forged = await Auth(
      authRequest({
        path: '/auth/callback/email',
        body: { token: link.searchParams.get('token')!, email: 'alice@example.com' },
      }),
      config,
    )
    expect(forged.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(setCookie(forged, SESSION_COOKIE)).toBeUndefined()
    expect(store.verificationTokens.size).toBe(1)
    expect(setCookie(await new EmailClient(config).confirm(link), SESSION_COOKIE)).toBeDefined()
  })
})

describe('the code endpoint hammered', () => {
  it('allows five guesses in all, however the attacker follows or races the flow cookie', async () => {
    const { config, outbox, store } = emailConfig({ provider: { code: true } })
    const client = new EmailClient(config)
    await client.requestLink('alice@example.com')
    const { code } = outbox[0]!
    const guess = code === '000000' ? '111111' : '000000'
    const csrfToken = await client.csrfToken()
    // Twenty concurrent guesses with the same cookie: one opens the flow, the rest are refused.
    const raced = await Promise.all(
      Array.from({ length: 20 }, () =>
        Auth(
          authRequest({ path: '/auth/callback/email', body: { code: guess, csrfToken }, cookies: client.jar }),
          config,
        ),
      ),
    )
    const answers = raced.map((r) => r.headers.get('location'))
    expect(answers.filter((a) => a === `${VERIFY_REQUEST}&error=InvalidCode`)).toHaveLength(1)
    client.jar.store(raced[answers.indexOf(`${VERIFY_REQUEST}&error=InvalidCode`)]!)
    // Then guesses in sequence, following the cookie: four more, then the token is void.
    const sequence: string[] = []
    for (let i = 0; i < 10; i++) sequence.push((await client.enterCode(guess)).headers.get('location')!)
    expect(sequence.slice(0, 3)).toEqual(Array(3).fill(`${VERIFY_REQUEST}&error=InvalidCode`))
    expect(sequence[3]).toBe(VERIFICATION)
    expect(sequence.slice(4)).toEqual(Array(6).fill(VERIFICATION))
    expect(store.verificationTokens.size).toBe(0)
  })
})

describe('floods of sends', () => {
  it('refuses a sixth message to one address within 15 minutes with EmailSignin, and warns', async () => {
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    for (let i = 0; i < 5; i++) expect((await client.requestLink('alice@example.com')).headers.get('location')).toBe(VERIFY_REQUEST)
    const sixth = await client.requestLink('ALICE@example.com')
    expect(sixth.headers.get('location')).toBe(EMAIL_SIGNIN)
    expect(outbox).toHaveLength(5)
    expect(config.logger.warn).toHaveBeenCalledWith('email-send-throttled')
    expect((await client.requestLink('bob@example.com')).headers.get('location')).toBe(VERIFY_REQUEST)
  })

  it('limits sends per client address through the configured trusted header only', async () => {
    const { config, outbox } = emailConfig({ provider: { throttle: { perAddress: 3, addressHeader: 'X-Real-IP' } } })
    const client = new EmailClient(config)
    const ask = async (email: string, ip: string) => {
      const csrfToken = await client.csrfToken()
      return (await client.send({ path: '/signin/email', body: { email, csrfToken }, headers: { 'x-real-ip': ip } })).headers.get('location')
    }
    for (let i = 0; i < 3; i++) expect(await ask(`user${i}@example.com`, '203.0.113.7')).toBe(VERIFY_REQUEST)
    expect(await ask('user9@example.com', '203.0.113.7')).toBe(EMAIL_SIGNIN)
    expect(await ask('user9@example.com', '198.51.100.1')).toBe(VERIFY_REQUEST)
    expect(outbox).toHaveLength(4)
  })

  it('has no per-client limit without a trusted header (a header the client controls proves nothing)', async () => {
    const { config, outbox } = emailConfig({ provider: { throttle: { perAddress: 1 } } })
    const client = new EmailClient(config)
    for (let i = 0; i < 4; i++) {
      const csrfToken = await client.csrfToken()
      await client.send({ path: '/signin/email', body: { email: `u${i}@example.com`, csrfToken }, headers: { 'x-real-ip': '203.0.113.7' } })
    }
    expect(outbox).toHaveLength(4)
  })

  it('counts +tag, case and Gmail dot variants of one mailbox as that mailbox, and sends to the address as typed', async () => {
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    // 34 spellings that all land in one Gmail inbox.
    const variants = Array.from({ length: 34 }, (_, i) => {
      const local = ['victim.mailbox', 'v.i.c.t.i.m.mailbox', 'VictimMailbox', 'victimmailbox'][i % 4]!
      const domain = i % 3 === 0 ? 'googlemail.com' : i % 3 === 1 ? 'Gmail.com' : 'gmail.com'
      return `${local}+bomb${i}@${domain}`
    })
    for (const variant of variants) await client.requestLink(variant)
    expect(outbox).toHaveLength(5)
    // The messages went to the addresses as they were typed (after Auth.js's normalisation).
    expect(outbox.map((m) => m.identifier)).toEqual(variants.slice(0, 5).map((v) => v.toLowerCase()))
    // A +tag counts as its mailbox on any domain; dots only on Gmail's.
    for (let i = 0; i < 5; i++) await client.requestLink(`alice+${i}@example.com`)
    expect((await client.requestLink('Alice+other@example.com')).headers.get('location')).toBe(EMAIL_SIGNIN)
    expect((await client.requestLink('a.lice@example.com')).headers.get('location')).toBe(VERIFY_REQUEST)
    expect(outbox).toHaveLength(11)
  })

  it('sends without limits when throttle is false', async () => {
    const { config, outbox } = emailConfig({ provider: { throttle: false } })
    const client = new EmailClient(config)
    for (let i = 0; i < 7; i++) await client.requestLink('alice@example.com')
    expect(outbox).toHaveLength(7)
  })
})

describe('control characters in the address', () => {
  it('refuses what a custom normaliser lets through, logging it escaped', async () => {
    const { config, outbox } = emailConfig({ provider: { normalizeIdentifier: (value) => value } })
    const client = new EmailClient(config)
    const response = await client.requestLink('alice@example.com\nBcc: all@example.com')
    expect(response.headers.get('location')).toBe(EMAIL_SIGNIN)
    expect(outbox).toHaveLength(0)
    const message = config.logger.error.mock.calls.at(-1)![0].message as string
    expect(message).toContain('alice@example.com\\nBcc')
    expect(message).not.toContain('\n')
  })
})

describe('secrets at rest', () => {
  it('never stores or logs a token or code in clear', async () => {
    const logged: unknown[] = []
    const record = (...args: unknown[]) => {
      logged.push(args.map((a) => (a instanceof Error ? { message: a.message, stack: a.stack, cause: a.cause } : a)))
    }
    const keys: string[] = []
    const inner = memoryAuthStore()
    const store: AuthStore = {
      claim: (key, ttl) => (keys.push(key), inner.claim(key, ttl)),
      increment: (key, ttl) => (keys.push(key), inner.increment(key, ttl)),
      reset: (key) => (keys.push(key), inner.reset(key)),
      consume: (key, points, window) => (keys.push(key), inner.consume(key, points, window)),
      put: (key, value, ttl) => (keys.push(key), inner.put(key, value, ttl)),
      get: (key) => (keys.push(key), inner.get(key)),
    }
    const { config, outbox, store: database } = emailConfig({
      provider: { code: true },
      overrides: { debug: true, logger: { error: record, warn: record, debug: record }, store },
    })
    const viaCode = new EmailClient(config)
    await viaCode.requestLink('alice@example.com')
    await viaCode.enterCode('WRONG1')
    await viaCode.enterCode(outbox[0]!.code!)
    const viaLink = new EmailClient(config)
    await viaLink.requestLink('bob@example.com')
    const rowsWhilePending = JSON.stringify([...database.verificationTokens.values()])
    await viaLink.confirm(lastLink(outbox))
    await viaLink.confirm(lastLink(outbox))

    const secrets = outbox.flatMap((m) => [m.token, m.code].filter((s): s is string => s !== undefined))
    expect(secrets.length).toBe(4)
    const everything = JSON.stringify({
      logged,
      keys,
      rowsWhilePending,
      rows: [...database.verificationTokens.values()],
      users: [...database.users.values()],
      sessions: [...database.sessions.values()],
    })
    expect(logged.length).toBeGreaterThan(0)
    for (const secret of secrets) expect(everything).not.toContain(secret)
    // Nor the address, in the store's keys.
    expect(keys.join(' ')).not.toContain('alice@example.com')
  })
})
