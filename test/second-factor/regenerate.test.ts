/**
 * New backup codes: `POST {basePath}/two-factor` with `action=regenerate-backup-codes` replaces the
 * signed-in user's backup codes and shows the new ones once. From the attacker's side first: the
 * old codes stop working at once (also when a spend races the replacement), the body cannot name
 * another user, a forged post and a signed-out one change nothing, and a stale session is sent to
 * prove itself again; then the module's replacement under the spends' lock.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { Auth } from '../../core/index.js'
import { replaceBackupCodes } from '../../core/second-factor/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { stepUp } from '../../core/step-up.js'
import { memoryAuthStore, type AuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { ALICE, authRequest, Client, credentialsProvider, featureConfig, ORIGIN } from '../fixtures/http.js'

const BOB = { id: 'u-2', name: 'Bob', email: 'bob@example.com' }
const STEP = '/step/signin-completion'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const now = () => Math.floor(Date.now() / 1000)

function twoUsers(store: MemoryStore, adapter: Adapter = MemoryAdapter(store), options: Partial<AuthConfig> = {}): AuthConfig {
  return featureConfig({
    adapter,
    providers: [
      credentialsProvider((c) =>
        c.username === 'alice' && c.password === 'wonderland' ? { ...ALICE } : c.username === 'bob' && c.password === 'builder' ? { ...BOB } : null,
      ),
    ],
    // The password just proven counts for new codes: these tests are about whose codes change;
    // the default policy (a recent second factor) is the subject of the stale-session test.
    stepUp: stepUp({ actions: { 'enrol-second-factor': { aal: 1 } } }),
    ...options,
  })
}

const codesOn = async (response: Response) => [...(await response.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!)

/** Signs in, turns two-step verification on, and returns the browser and the backup codes shown. */
async function enrolled(config: AuthConfig, username: string, password: string) {
  const client = new Client(config)
  await client.signIn({ username, password })
  await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
  const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
  const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
  const codes = await codesOn(await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } }))
  expect(codes).toHaveLength(10)
  return { client, codes }
}

const regenerate = async (client: Client, body: Record<string, string> = {}) =>
  client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken(), action: 'regenerate-backup-codes', ...body } })

/** Whether `code` signs `username` in past the second factor, in a fresh browser. */
async function signsIn(config: AuthConfig, username: string, password: string, code: string): Promise<boolean> {
  const client = new Client(config)
  const response = await client.signIn({ username, password })
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
  const answer = await Auth(authRequest({ path: `/auth${STEP}`, body: { csrfToken: await client.csrfToken(), code }, cookies: client.jar }), config)
  return answer.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !c.includes('Max-Age=0'))
}

const idOf = (store: MemoryStore, email: string) => [...store.users.values()].find((user) => user.email === email)!.id
const backupSecretOf = (store: MemoryStore, email: string) =>
  [...store.secondFactors.values()].find((f) => f.userId === idOf(store, email) && f.type === 'backup-codes')?.secret

describe('new backup codes through Auth', () => {
  it('replaces every old code at once: the new ones sign in, the old ones no longer', async () => {
    const store = createMemoryStore()
    const config = twoUsers(store)
    const { client, codes: old } = await enrolled(config, 'alice', 'wonderland')
    const response = await regenerate(client)
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toContain('no-store')
    const fresh = await codesOn(response)
    expect(fresh).toHaveLength(10)
    expect(fresh.filter((code) => old.includes(code))).toEqual([])
    expect(await signsIn(config, 'alice', 'wonderland', old[0]!)).toBe(false)
    expect(await signsIn(config, 'alice', 'wonderland', fresh[0]!)).toBe(true)
    const settings = await (await client.send({ path: '/two-factor' })).text()
    expect(settings).toContain('9 backup codes left')
  })

  it("acts for the signed-in user only: Alice's request, whatever its body names, leaves Bob's codes as they were", async () => {
    const store = createMemoryStore()
    const config = twoUsers(store)
    const { codes: bobs } = await enrolled(config, 'bob', 'builder')
    const { client: alice } = await enrolled(config, 'alice', 'wonderland')
    const before = backupSecretOf(store, BOB.email)
    const bobsFactor = [...store.secondFactors.values()].find((f) => f.userId === idOf(store, BOB.email) && f.type === 'backup-codes')!
    await regenerate(alice, { userId: idOf(store, BOB.email), id: bobsFactor.id, factorId: bobsFactor.id })
    expect(backupSecretOf(store, BOB.email)).toBe(before)
    expect(await signsIn(config, 'bob', 'builder', bobs[0]!)).toBe(true)
  })

  it('changes nothing for a post without the CSRF token, a signed-out browser, or a user without two-step verification', async () => {
    const store = createMemoryStore()
    const config = twoUsers(store)
    const { client } = await enrolled(config, 'alice', 'wonderland')
    const before = backupSecretOf(store, ALICE.email)
    const forged = await client.send({ path: '/two-factor', body: { action: 'regenerate-backup-codes' } })
    expect(forged.headers.get('location')).toContain('error=MissingCSRF')
    const signedOut = await regenerate(new Client(config))
    expect(signedOut.headers.get('location')).toBe(`${ORIGIN}/auth/signin?callbackUrl=${encodeURIComponent(`${ORIGIN}/auth/two-factor`)}`)
    expect(backupSecretOf(store, ALICE.email)).toBe(before)

    const bob = new Client(config)
    await bob.signIn({ username: 'bob', password: 'builder' })
    const none = await regenerate(bob)
    expect(none.headers.get('location')).toBe(`${ORIGIN}/auth/two-factor`)
    expect(backupSecretOf(store, BOB.email)).toBeUndefined()
  })

  it("refuses a session whose second factor is not recent (step-up's default policy), and changes nothing", async () => {
    const store = createMemoryStore()
    // Step-up's default: a user with a second factor proves one within ten minutes; enrolling is no sign-in.
    const config = twoUsers(store, MemoryAdapter(store), { stepUp: stepUp() })
    const { client } = await enrolled(config, 'alice', 'wonderland')
    const before = backupSecretOf(store, ALICE.email)
    const response = await regenerate(client)
    expect(response.status).toBe(401)
    expect(await codesOn(response)).toEqual([])
    const page = await client.send({
      path: '/two-factor',
      body: { csrfToken: await client.csrfToken(), action: 'regenerate-backup-codes' },
      headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' },
    })
    // A form post is sent on with 303, so the browser asks for the re-authentication with a GET.
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toMatch(new RegExp(`^${ORIGIN}/auth/step/reauthenticate`))
    expect(backupSecretOf(store, ALICE.email)).toBe(before)
  })

  it('does not bring old codes back when a code is spent at the moment they are replaced (an adapter without spendBackupCode)', async () => {
    const store = createMemoryStore()
    const { spendBackupCode: _spend, ...adapter } = MemoryAdapter(store) as Required<Adapter>
    const config = twoUsers(store, adapter)
    const { client, codes: old } = await enrolled(config, 'alice', 'wonderland')
    const waiting = new Client(config)
    await waiting.signIn({ username: 'alice', password: 'wonderland' })
    const [, replaced] = await Promise.all([
      Auth(authRequest({ path: `/auth${STEP}`, body: { csrfToken: await waiting.csrfToken(), code: old[0]! }, cookies: waiting.jar }), config),
      regenerate(client),
    ])
    const fresh = await codesOn(replaced)
    expect(fresh).toHaveLength(10)
    for (const code of old.slice(1, 4)) expect(await signsIn(config, 'alice', 'wonderland', code)).toBe(false)
    expect(await signsIn(config, 'alice', 'wonderland', fresh[9]!)).toBe(true)
  })
})

describe('replaceBackupCodes', () => {
  async function factorOf(adapter: Required<Adapter>) {
    await adapter.createUser({ id: 'u', email: 'u@example.com', emailVerified: null })
    const factor = { id: 'f', userId: 'u', type: 'backup-codes' as const, secret: 'old1 old2', createdAt: new Date() }
    await adapter.createSecondFactor(factor)
    return factor
  }

  it('waits for the spends of the factor under their lock, and lets go of it', async () => {
    const { spendBackupCode: _spend, ...adapter } = MemoryAdapter(createMemoryStore()) as Required<Adapter>
    const factor = await factorOf(adapter as Required<Adapter>)
    const store = memoryAuthStore()
    expect(await store.claim('2fa:backup-lock:f', 10)).toBe(true)
    let done = false
    const replacing = replaceBackupCodes(adapter, store, factor, 'new1 new2').then(() => (done = true))
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(done).toBe(false)
    expect((await adapter.listSecondFactors('u'))[0]!.secret).toBe('old1 old2')
    await store.reset('2fa:backup-lock:f')
    await replacing
    expect((await adapter.listSecondFactors('u'))[0]!.secret).toBe('new1 new2')
    expect(await store.claim('2fa:backup-lock:f', 1)).toBe(true)
  })

  it('gives up, replacing nothing, when the lock stays taken', async () => {
    const { spendBackupCode: _spend, ...adapter } = MemoryAdapter(createMemoryStore()) as Required<Adapter>
    const factor = await factorOf(adapter as Required<Adapter>)
    const stuck: AuthStore = { ...memoryAuthStore(), claim: async () => false }
    await expect(replaceBackupCodes(adapter, stuck, factor, 'new1')).rejects.toThrow('locked')
    expect((await adapter.listSecondFactors('u'))[0]!.secret).toBe('old1 old2')
  })

  it("writes at once through an adapter's conditional spend (no lock to take)", async () => {
    const adapter = MemoryAdapter(createMemoryStore()) as Required<Adapter>
    const factor = await factorOf(adapter)
    const stuck: AuthStore = { ...memoryAuthStore(), claim: async () => false }
    await replaceBackupCodes(adapter, stuck, factor, 'new1')
    expect((await adapter.listSecondFactors('u'))[0]!.secret).toBe('new1')
  })
})
