/**
 * Issue #48 item 3 through `Auth`: someone who knows the password sends wrong codes from their own
 * address, one a minute for as long as they like, and the owner still signs in, from another
 * address, from a browser that passed the second factor before (even behind the attacker's
 * address), or with a backup code; the page of a paused client says someone is trying codes.
 * Before the fix the owner's right code was refused ("wait a minute") in every case below.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth, setClientAddress } from '../../core/index.js'
import { CODE_MESSAGES } from '../../core/pages/messages.js'
import { CLEAN_CLIENT_CODES, MAX_USER_ATTEMPTS, USER_LOCK_SLOT } from '../../core/second-factor/index.js'
import { DEVICE_COOKIE } from '../../core/second-factor/device.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, Client, ORIGIN, featureConfig, type AuthRequestInit } from '../fixtures/http.js'
import { wrongCode } from './codes.js'

const STEP = '/step/signin-completion'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const DEVICE = `__Secure-${DEVICE_COOKIE}`
const ATTACKER = '203.0.113.7'
const OWNER = '198.51.100.2'

const T0 = Math.ceil(Date.now() / 1000 / 3600) * 3600
let clock = T0
const advance = (seconds: number) => {
  clock += seconds
  vi.setSystemTime(clock * 1000)
}
beforeEach(() => {
  clock = T0
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(T0 * 1000)
})
afterEach(() => vi.useRealTimers())

/** A browser at one client address. */
class BrowserAt extends Client {
  constructor(
    config: AuthConfig,
    readonly address: string,
  ) {
    super(config)
  }

  override async send(init: Omit<AuthRequestInit, 'cookies' | 'origin'>): Promise<Response> {
    const request = setClientAddress(authRequest({ ...init, path: `${this.basePath}${init.path}`, cookies: this.jar }), this.address)
    const response = await Auth(request, this.config as Omit<AuthConfig, 'raw'>)
    this.jar.store(response)
    return response
  }
}

async function enrolledOwner(): Promise<{ config: AuthConfig; secret: string; backupCodes: string[] }> {
  const config = featureConfig({ adapter: MemoryAdapter(createMemoryStore()), store: memoryAuthStore() })
  const owner = new BrowserAt(config, OWNER)
  await owner.signIn({ username: 'alice', password: 'wonderland' })
  await owner.send({ path: '/two-factor', body: { csrfToken: await owner.csrfToken() } })
  const page = await (await owner.send({ path: '/step/totp-enrolment' })).text()
  const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
  const done = await owner.send({ path: '/step/totp-enrolment', body: { csrfToken: await owner.csrfToken(), code: totpCode(secret, clock) } })
  const backupCodes = [...(await done.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!)
  await owner.signOut()
  advance(USER_LOCK_SLOT)
  return { config, secret, backupCodes }
}

async function atStep(browser: BrowserAt): Promise<BrowserAt> {
  const response = await browser.signIn({ username: 'alice', password: 'wonderland' }, { callbackUrl: '/dashboard' })
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
  return browser
}

const answer = async (browser: BrowserAt, code: string) => browser.send({ path: STEP, body: { csrfToken: await browser.csrfToken(), code } })

/**
 * The attacker spends the user's codes and their own address's codes past them, and takes this
 * minute's late check, in sign-ins of five codes each.
 */
async function spendCodes(config: AuthConfig, secret: string): Promise<void> {
  for (let round = 0; round < Math.ceil((MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 1) / 5); round++) {
    const attacker = await atStep(new BrowserAt(config, ATTACKER))
    for (let i = 0; i < 5; i++) await answer(attacker, wrongCode(secret, clock))
  }
}
const trickle = async (config: AuthConfig, secret: string) => answer(await atStep(new BrowserAt(config, ATTACKER)), wrongCode(secret, clock))

describe('a password holder trickling wrong codes', () => {
  it('does not keep the owner at another address out', async () => {
    const { config, secret } = await enrolledOwner()
    await spendCodes(config, secret)
    for (let minute = 0; minute < 3; minute++) {
      advance(USER_LOCK_SLOT)
      await trickle(config, secret)
    }
    const owner = await atStep(new BrowserAt(config, OWNER))
    const signedIn = await answer(owner, totpCode(secret, clock))
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(owner.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('lets a browser that passed the second factor before in, even behind the attacker’s address', async () => {
    const { config, secret } = await enrolledOwner()
    // The owner signs in once on this browser: it becomes a known device.
    const owner = await atStep(new BrowserAt(config, ATTACKER))
    await answer(owner, totpCode(secret, clock))
    expect(owner.jar.get(DEVICE)).toMatch(/^[0-9a-f]{32}\.[0-9a-f]{64}$/)
    await owner.signOut()
    advance(USER_LOCK_SLOT)
    await spendCodes(config, secret)
    advance(USER_LOCK_SLOT)
    await trickle(config, secret)
    // A browser without the mark at the same address is paused, and told why.
    const stranger = await atStep(new BrowserAt(config, ATTACKER))
    await answer(stranger, totpCode(secret, clock))
    expect(stranger.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(await (await stranger.send({ path: STEP })).text()).toContain(CODE_MESSAGES.codesTried)
    // The owner's browser is counted on its own.
    await atStep(owner)
    const signedIn = await answer(owner, totpCode(secret, clock + 30))
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
  })

  it('does not take a device mark made for another user, or a forged one', async () => {
    const { config, secret } = await enrolledOwner()
    await spendCodes(config, secret)
    advance(USER_LOCK_SLOT)
    await trickle(config, secret)
    for (const mark of [`${'a'.repeat(32)}.${'b'.repeat(64)}`, 'not-a-mark']) {
      const forger = new BrowserAt(config, ATTACKER)
      forger.jar.cookies.set(DEVICE, mark)
      await atStep(forger)
      await answer(forger, totpCode(secret, clock))
      expect(forger.jar.get(SESSION_COOKIE)).toBeUndefined()
    }
  })

  it('accepts a backup code while TOTP codes from that address are paused', async () => {
    const { config, secret, backupCodes } = await enrolledOwner()
    await spendCodes(config, secret)
    advance(USER_LOCK_SLOT)
    await trickle(config, secret)
    const owner = await atStep(new BrowserAt(config, ATTACKER))
    await answer(owner, totpCode(secret, clock))
    expect(owner.jar.get(SESSION_COOKIE)).toBeUndefined()
    const signedIn = await answer(owner, backupCodes[0]!)
    expect(signedIn.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(owner.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('says a reused code was already used', async () => {
    const { config, secret } = await enrolledOwner()
    const code = totpCode(secret, clock)
    await answer(await atStep(new BrowserAt(config, OWNER)), code)
    const again = await atStep(new BrowserAt(config, OWNER))
    await answer(again, code)
    expect(await (await again.send({ path: STEP })).text()).toContain(CODE_MESSAGES.codeUsed)
  })
})

describe('a store that cannot count codes', () => {
  it('refuses the code unchecked: no session, answered 503', async () => {
    const { config, secret } = await enrolledOwner()
    const owner = await atStep(new BrowserAt(config, OWNER))
    const store = config.store!
    const failing = { ...config, store: { ...store, increment: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })) } }
    const response = await Auth(
      setClientAddress(authRequest({ path: `/auth${STEP}`, body: { csrfToken: await owner.csrfToken(), code: totpCode(secret, clock) }, cookies: owner.jar }), OWNER),
      failing,
    )
    expect(response.status).toBe(503)
    expect(response.headers.getSetCookie().some((cookie) => cookie.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
  })
})
