/**
 * Issue 48, item 1, from the attacker's side over HTTP: the holder of a stale cookie changes what
 * the token claims through `update()` (a `jwt` callback that merges the client's data, the
 * profile-edit pattern of Auth.js's docs), then proves a factor of their own. A factor is the one
 * the adapter stores for the session's user: the code goes to the stored address, another user's
 * password or address proves nothing, and without an adapter record there is no e-mail factor.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { ALICE, Client, credentialsProvider, featureConfig } from '../fixtures/http.js'
import { HTML, isFresh, later, MALLORY, mergingApp, post, STEP_PAGE, tokenOf, update, users } from './fixture.js'

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('a factor is proven against what the adapter stores (JWT sessions, a merging jwt callback)', () => {
  it("sends the code to the stored address, not the one update() put in the token", async () => {
    const { config, sent } = mergingApp()
    const thief = new Client(config)
    await thief.signIn({ username: 'alice', password: 'wonderland' })
    later(11)
    await update(thief, { email: MALLORY.email })
    expect((await tokenOf(thief))?.email).toBe(MALLORY.email)
    expect((await post(thief, '/two-factor', {})).headers.get('location')).toBe(STEP_PAGE)
    const page = await (await thief.send({ path: '/step/reauthenticate', headers: HTML })).text()
    expect(page).toContain('a***@example.com')
    expect(page).not.toContain('m***@evil.example')
    await post(thief, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
    expect(sent.map((mail) => mail.to)).toEqual([ALICE.email])
    // The attacker's mailbox got nothing: whatever they type proves nothing.
    await post(thief, '/step/reauthenticate', { event: 'reauth.emailCode', code: '00000000' })
    expect(await isFresh(thief)).toBe(false)
  })

  it('does not offer the e-mail factor for a user the adapter has no record of', async () => {
    const { config, sent } = mergingApp()
    const stranger = credentialsProvider((c) => (c.username === 'ghost' && c.password === 'boo' ? { id: 'u-9', email: 'ghost@example.com' } : null))
    config.providers = [stranger, ...config.providers.slice(1)]
    const ghost = new Client(config)
    await ghost.signIn({ username: 'ghost', password: 'boo' })
    later(11)
    await post(ghost, '/two-factor', {})
    const page = await (await ghost.send({ path: '/step/reauthenticate', headers: HTML })).text()
    expect(page).not.toContain('Send a code')
    const asked = await post(ghost, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
    expect(asked.headers.get('location')).toMatch(/\/auth\/error\?error=/)
    expect(sent).toEqual([])
  })

  it("refuses another user's password, whatever update() wrote into the token's email and name", async () => {
    const { config } = mergingApp()
    const thief = new Client(config)
    await thief.signIn({ username: 'alice', password: 'wonderland' })
    later(11)
    await update(thief, { email: MALLORY.email, name: MALLORY.name, id: MALLORY.id })
    await post(thief, '/two-factor', {})
    const other = await post(thief, '/step/reauthenticate', { event: 'reauth.password', username: 'mallory', password: 'mallory-pw' })
    expect(other.headers.get('location')).toBe(STEP_PAGE)
    expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-other-user')
    expect(await isFresh(thief)).toBe(false)
  })
})

describe('the password factor with two users (database sessions)', () => {
  it("refuses the other user's password and accepts the owner's", async () => {
    const store: MemoryStore = createMemoryStore()
    const config = featureConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database' }, store: memoryAuthStore(), providers: [users] })
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    const mallory = new Client(config)
    await mallory.signIn({ username: 'mallory', password: 'mallory-pw' })
    later(11)
    await post(alice, '/two-factor', {})
    const other = await post(alice, '/step/reauthenticate', { event: 'reauth.password', username: 'mallory', password: 'mallory-pw' })
    expect(other.headers.get('location')).toBe(STEP_PAGE)
    expect(await isFresh(alice)).toBe(false)
    await post(alice, '/two-factor', {})
    await post(alice, '/step/reauthenticate', { event: 'reauth.password', username: 'alice', password: 'wonderland' })
    expect(await isFresh(alice)).toBe(true)
  })
})

describe('the password factor when authorize returns no id (database sessions)', () => {
  // The sign-in names such a credentials account by its e-mail address; the proof is read the same way.
  const byEmail = credentialsProvider((c) =>
    c.username === 'alice' && c.password === 'wonderland'
      ? { email: 'alice@example.com', name: 'Alice' }
      : c.username === 'mallory' && c.password === 'mallory-pw'
        ? { email: MALLORY.email, name: 'Mallory' }
        : null,
  )

  it("accepts the owner's password and refuses the other user's", async () => {
    const store: MemoryStore = createMemoryStore()
    const config = featureConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database' }, store: memoryAuthStore(), providers: [byEmail] })
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    const mallory = new Client(config)
    await mallory.signIn({ username: 'mallory', password: 'mallory-pw' })
    later(11)
    await post(alice, '/two-factor', {})
    const other = await post(alice, '/step/reauthenticate', { event: 'reauth.password', username: 'mallory', password: 'mallory-pw' })
    expect(other.headers.get('location')).toBe(STEP_PAGE)
    expect(await isFresh(alice)).toBe(false)
    await post(alice, '/two-factor', {})
    const owner = await post(alice, '/step/reauthenticate', { event: 'reauth.password', username: 'alice', password: 'wonderland' })
    expect(owner.status).toBe(200)
    expect(await isFresh(alice)).toBe(true)
  })
})
