/**
 * Turning on two-step verification through `Auth`, on the memory adapter and store (fast enough to
 * run for every mutant of core/flows/totp-enrolment/flow.ts): the key and QR code shown to the
 * enrolling user only, the confirming code and its limit, each user's own factor and backup codes,
 * an adapter that cannot store factors, and a factor store that fails or lags.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { hashBackupCode, MAX_CODE_ATTEMPTS, openFactorSecret } from '../../core/second-factor/index.js'
import { totpCode, totpEnrolment } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { ALICE, Client, credentialsProvider, ORIGIN, SECRET, featureConfig } from '../fixtures/http.js'
import { stepUp } from '../../core/step-up.js'

const STEP = '/step/totp-enrolment'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const now = () => Math.floor(Date.now() / 1000)
const BOB = { id: 'u-2', name: 'Bob', email: 'bob@example.com', image: null }
const CAROL = { id: 'u-3', name: 'Carol', email: null, image: null }

/** Alice, Bob and Carol (who has no address) sign in with their passwords. */
const users = credentialsProvider((c) => [ALICE, BOB, CAROL].find((user) => c.username === user.name.toLowerCase() && c.password === 'pw') ?? null)

function setup(adapter?: (memory: MemoryStore) => Adapter, overrides: Partial<AuthConfig> = {}) {
  const store = createMemoryStore()
  const config = featureConfig({ adapter: (adapter ?? MemoryAdapter)(store), providers: [users], session: { strategy: 'database' }, stepUp: stepUp({ aal: 1 }), ...overrides })
  return { store, config }
}

async function signedIn(config: AuthConfig, name = 'alice'): Promise<Client> {
  const client = new Client(config)
  await client.signIn({ username: name, password: 'pw' }, { callbackUrl: '/account' })
  expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  return client
}

async function start(client: Client): Promise<Response> {
  return client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
}

/** Starts an enrolment; the page it shows, and the key read off it. */
async function startEnrolment(client: Client): Promise<{ page: string; secret: string }> {
  expect((await start(client)).headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
  const page = await (await client.send({ path: STEP })).text()
  return { page, secret: /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]! }
}

async function confirm(client: Client, code: string): Promise<Response> {
  return client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), code } })
}

const shownCodes = async (response: Response) => [...(await response.clone().text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!)
/** The factors of the stored user with `email` (or name): users get their ids when first stored. */
const factorsOf = (store: MemoryStore, who: { email: string | null; name: string }) => {
  const user = [...store.users.values()].find((u) => (who.email ? u.email === who.email : u.name === who.name))
  return [...store.secondFactors.values()].filter((f) => f.userId === user?.id)
}
const enrolmentCookie = (client: Client) => [...client.jar.cookies].find(([name]) => name.endsWith('totp-enrolment'))!

describe('the enrolment page', () => {
  it("shows the key, and a QR code of an otpauth URI naming the user's address and the site", async () => {
    const { config } = setup()
    const { page, secret } = await startEnrolment(await signedIn(config))
    const { qr } = await totpEnrolment(secret, ALICE.email, 'authchart.test')
    expect(page).toContain(qr)
  })

  it('names a user without an address by their name', async () => {
    const { config } = setup()
    const { page, secret } = await startEnrolment(await signedIn(config, 'carol'))
    expect(page).toContain((await totpEnrolment(secret, 'Carol', 'authchart.test')).qr)
  })

  it('shows neither key nor QR code to another signed-in user holding the enrolment cookie', async () => {
    const { config } = setup()
    const alice = await signedIn(config)
    await startEnrolment(alice)
    const bob = await signedIn(config, 'bob')
    bob.jar.cookies.set(...enrolmentCookie(alice))
    const response = await bob.send({ path: STEP })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    const page = await response.text()
    expect(page).not.toContain('class="secret"')
    expect(page).not.toContain('<svg')
  })
})

describe('confirming', () => {
  it("stores the user's TOTP factor (sealed, dated now) and ten backup codes as hashes, and shows the codes", async () => {
    const { store, config } = setup()
    const client = await signedIn(config)
    const { secret } = await startEnrolment(client)
    const done = await confirm(client, ` ${totpCode(secret, now())} `)
    expect(done.status).toBe(200)
    const codes = await shownCodes(done)
    expect(codes).toHaveLength(10)
    const factors = factorsOf(store, ALICE)
    const totp = factors.find((f) => f.type === 'totp')!
    expect(await openFactorSecret(totp.secret, [SECRET])).toBe(secret)
    expect(Math.abs(totp.createdAt.getTime() - Date.now())).toBeLessThan(60_000)
    const backup = factors.find((f) => f.type === 'backup-codes')!
    expect(backup.secret.split(' ')).toEqual(await Promise.all(codes.map((code) => hashBackupCode(code, SECRET))))
    expect(backup.createdAt).toEqual(totp.createdAt)
    expect(factors).toHaveLength(2)
  })

  it('lets two users each turn it on, each with their own factor and codes', async () => {
    const { store, config } = setup()
    for (const [name, user] of [['alice', ALICE], ['bob', BOB]] as const) {
      const client = await signedIn(config, name)
      const { secret } = await startEnrolment(client)
      // Three wrong codes each: every enrolment has its own count.
      for (let i = 0; i < 3; i++) expect((await confirm(client, '000000')).headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
      expect(await shownCodes(await confirm(client, totpCode(secret, now())))).toHaveLength(10)
      expect(factorsOf(store, user).map((f) => f.type).sort()).toEqual(['backup-codes', 'totp'])
    }
  })

  it(`checks the ${MAX_CODE_ATTEMPTS}th code, and after it gives up: an error, a warning, and no later code counts`, async () => {
    const { store, config } = setup()
    const client = await signedIn(config)
    const { secret } = await startEnrolment(client)
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) await confirm(client, '000000')
    expect(await shownCodes(await confirm(client, totpCode(secret, now())))).toHaveLength(10)

    const other = setup()
    const guesser = await signedIn(other.config)
    const pending = await startEnrolment(guesser)
    const cookie = enrolmentCookie(guesser)
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) await confirm(guesser, '000000')
    const last = await confirm(guesser, '000000')
    expect(last.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(other.config.logger.warn).toHaveBeenCalledWith('second-factor-attempts-exhausted')
    // The first flow cookie again, with the right code: the count is on the server.
    guesser.jar.cookies.set(...cookie)
    const replayed = await confirm(guesser, totpCode(pending.secret, now()))
    expect(await shownCodes(replayed)).toEqual([])
    expect(factorsOf(other.store, ALICE)).toEqual([])
    expect(factorsOf(store, ALICE)).toHaveLength(2)
  })

  it('checks no code past the limit, even on a flow cookie replayed where single use is not enforced', async () => {
    // A store that never refuses a claim (another instance's, say): the flow cookie is replayed at
    // will, and only the server's count stands between a guesser and the code.
    const forgetful = { ...memoryAuthStore(), claim: async () => true }
    const { store, config } = setup(undefined, { store: forgetful })
    const client = await signedIn(config)
    const { secret } = await startEnrolment(client)
    const cookie = enrolmentCookie(client)
    for (let i = 0; i < MAX_CODE_ATTEMPTS; i++) {
      client.jar.cookies.set(...cookie)
      await confirm(client, '000000')
    }
    client.jar.cookies.set(...cookie)
    const right = await confirm(client, totpCode(secret, now()))
    expect(right.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect([...store.secondFactors.values()]).toEqual([])
  })

  it('refuses a confirmation from another user, saying why in the log', async () => {
    const { store, config } = setup()
    const alice = await signedIn(config)
    const { secret } = await startEnrolment(alice)
    const bob = await signedIn(config, 'bob')
    bob.jar.cookies.set(...enrolmentCookie(alice))
    const refused = await confirm(bob, totpCode(secret, now()))
    expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(config.logger.debug).toHaveBeenCalledWith('second-factor enrolment refused', { reason: 'not signed in as the enrolling user' })
    expect([...store.secondFactors.values()]).toEqual([])
  })

  it('refuses to start a second enrolment of an enrolled user, and to confirm one started before, saying why', async () => {
    const { store, config } = setup()
    const client = await signedIn(config)
    const earlier = await startEnrolment(client)
    const cookie = enrolmentCookie(client)
    const { secret } = await startEnrolment(client)
    await confirm(client, totpCode(secret, now()))
    const factors = factorsOf(store, ALICE)
    expect((await start(client)).headers.get('location')).toBe(`${ORIGIN}/account`)
    client.jar.cookies.set(...cookie)
    const late = await confirm(client, totpCode(earlier.secret, now() + 30))
    expect(late.headers.get('location')).toBe(`${ORIGIN}/account`)
    expect(config.logger.debug).toHaveBeenCalledWith('second-factor enrolment refused', { reason: 'a second factor is already enrolled' })
    expect(factorsOf(store, ALICE)).toEqual(factors)
  })
})

describe('the factor store', () => {
  it('missing a method: a Configuration error naming the methods, nothing stored', async () => {
    const { store, config } = setup((memory) => {
      const { createSecondFactor: _c, deleteSecondFactor: _d, ...adapter } = MemoryAdapter(memory)
      return adapter
    })
    const client = await signedIn(config)
    expect((await start(client)).headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    const [[logged]] = config.logger.error.mock.calls as [[Error & { cause: { err: Error } }]]
    expect(logged.cause.err.message).toBe('two-step verification needs an adapter with createSecondFactor, deleteSecondFactor')
    expect([...store.secondFactors.values()]).toEqual([])
  })

  it('failing to store the factor: a Configuration error, no codes shown', async () => {
    const { store, config } = setup((memory) => ({
      ...MemoryAdapter(memory),
      createSecondFactor: async () => {
        throw new Error('the database is down')
      },
    }))
    const client = await signedIn(config)
    const { secret } = await startEnrolment(client)
    const failed = await confirm(client, totpCode(secret, now()))
    expect(failed.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(await shownCodes(failed)).toEqual([])
    expect([...store.secondFactors.values()]).toEqual([])
  })

  it('failing a write: a lost race only when the TOTP factor of the user is there, else a Configuration error', async () => {
    // Reads that lag once (the check before the write sees nothing), and writes that fail.
    let lagging = false
    const failing = (memory: MemoryStore) => {
      const adapter = MemoryAdapter(memory)
      return {
        ...adapter,
        listSecondFactors: async (userId: string) => (lagging ? ((lagging = false), []) : adapter.listSecondFactors!(userId)),
        createSecondFactor: async () => {
          throw new Error('the write failed')
        },
      }
    }
    for (const [present, expected] of [
      ['totp', `${ORIGIN}/account`],
      ['backup-codes', `${ORIGIN}/auth/error?error=Configuration`],
    ] as const) {
      const { store, config } = setup(failing)
      const client = await signedIn(config)
      const { secret } = await startEnrolment(client)
      const user = [...store.users.values()][0]!
      // What the other enrolment had written when this one's write failed.
      const id = present === 'totp' ? `totp:${user.id}` : `totp:${user.id}:backup-codes`
      store.secondFactors.set(id, { id, userId: user.id, type: present, secret: 'x', createdAt: new Date() })
      lagging = true
      const late = await confirm(client, totpCode(secret, now()))
      expect(late.headers.get('location'), present).toBe(expected)
      expect(await shownCodes(late)).toEqual([])
    }
  })

  it('whose reads lag behind its writes: the factor enrolled meanwhile wins, its backup codes kept', async () => {
    let lagging = false
    const { store, config } = setup((memory) => {
      const adapter = MemoryAdapter(memory)
      return {
        ...adapter,
        // A replica that has not seen the factor yet, once.
        listSecondFactors: async (userId: string) => {
          if (!lagging) return adapter.listSecondFactors!(userId)
          lagging = false
          return []
        },
      }
    })
    const first = await signedIn(config)
    const second = await signedIn(config)
    const pending = await startEnrolment(second)
    const { secret } = await startEnrolment(first)
    await confirm(first, totpCode(secret, now()))
    const factors = factorsOf(store, ALICE)
    lagging = true
    const late = await confirm(second, totpCode(pending.secret, now() + 30))
    expect(lagging).toBe(false)
    expect(late.headers.get('location')).toBe(`${ORIGIN}/account`)
    expect(await shownCodes(late)).toEqual([])
    expect(factorsOf(store, ALICE)).toEqual(factors)
  })
})
