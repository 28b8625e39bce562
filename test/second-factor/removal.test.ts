/**
 * Turning two-step verification off: `POST {basePath}/two-factor` with `action=disable` removes the
 * signed-in user's TOTP factor and backup codes (CSRF-checked, for that user only) and records
 * `second-factor-removed`; the settings page offers the button.
 */
import { describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { AdapterSecondFactor } from '../../core/adapters.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { removeSecondFactors } from '../../core/second-factor/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { auditTrail } from '../../core/audit.js'
import { ALICE, Client, credentialsProvider, ORIGIN, featureConfig } from '../fixtures/http.js'
import { stepUp } from '../../core/step-up.js'

const BOB = { id: 'u-2', name: 'Bob', email: 'bob@example.com' }
const now = () => Math.floor(Date.now() / 1000)

function twoUsers(store: MemoryStore, events: AuditEvent[]) {
  return featureConfig({
    adapter: MemoryAdapter(store),
    audit: auditTrail({ sink: (event) => void events.push(event) }),
    // The password just proven counts for turning the factor off: these tests are about whose
    // factors go; the default (a recent second factor) is the re-authentication tests' subject.
    stepUp: stepUp({ actions: { 'remove-second-factor': { aal: 1 } } }),
    providers: [
      credentialsProvider((c) =>
        c.username === 'alice' && c.password === 'wonderland' ? { ...ALICE } : c.username === 'bob' && c.password === 'builder' ? { ...BOB } : null,
      ),
    ],
  })
}

/** Signs in and turns two-step verification on, through the pages' forms. */
async function enrolled(config: ReturnType<typeof twoUsers>, username: string, password: string) {
  const client = new Client(config)
  await client.signIn({ username, password })
  await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
  const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
  const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
  const done = await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } })
  expect(done.status).toBe(200)
  return client
}

/** The stored user's id (a credentials sign-in with an adapter stores the user under a new id). */
const idOf = (store: MemoryStore, email: string) => [...store.users.values()].find((user) => user.email === email)!.id

const factorsOf = (store: MemoryStore, email: string) =>
  [...store.secondFactors.values()].filter((factor) => factor.userId === idOf(store, email)).map((factor) => factor.type).sort()

describe('turning two-step verification off through Auth', () => {
  it('removes the signed-in user\'s factors and records second-factor-removed; the page offers "Turn off"', async () => {
    const store = createMemoryStore()
    const events: AuditEvent[] = []
    const config = twoUsers(store, events)
    const alice = await enrolled(config, 'alice', 'wonderland')
    expect(factorsOf(store, ALICE.email)).toEqual(['backup-codes', 'totp'])
    // The settings page links to a page that asks first; that page posts the removal.
    const settings = await (await alice.send({ path: '/two-factor' })).text()
    expect(settings).not.toContain('name="action" value="disable"')
    expect(settings).toContain(`<a class="button secondary" href="${ORIGIN}/auth/two-factor?confirm=disable">Turn off two-step verification…</a>`)
    const asking = await (await alice.send({ path: '/two-factor', query: { confirm: 'disable' } })).text()
    expect(asking).toContain('<h1>Turn off two-step verification?</h1>')
    expect(asking).toContain('name="action" value="disable"')
    expect(asking).toContain(`<p class="back"><a href="${ORIGIN}/auth/two-factor">Cancel</a></p>`)
    expect(factorsOf(store, ALICE.email)).toEqual(['backup-codes', 'totp'])

    events.length = 0
    const response = await alice.send({ path: '/two-factor', body: { csrfToken: await alice.csrfToken(), action: 'disable' } })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/two-factor`)
    expect(factorsOf(store, ALICE.email)).toEqual([])
    expect(events.filter((event) => event.kind === 'second-factor-removed')).toEqual([
      expect.objectContaining({ kind: 'second-factor-removed', userId: idOf(store, ALICE.email) }),
    ])
    const after = await (await alice.send({ path: '/two-factor' })).text()
    expect(after).toContain('Two-step verification is <strong>off</strong>')
  })

  it('acts for the signed-in user only: Alice cannot remove Bob\'s factors, whatever the body names', async () => {
    const store = createMemoryStore()
    const events: AuditEvent[] = []
    const config = twoUsers(store, events)
    await enrolled(config, 'bob', 'builder')
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    const bob = idOf(store, BOB.email)
    const bobsFactor = [...store.secondFactors.values()].find((factor) => factor.userId === bob)!
    events.length = 0
    await alice.send({
      path: '/two-factor',
      body: { csrfToken: await alice.csrfToken(), action: 'disable', userId: bob, id: bobsFactor.id, factorId: bobsFactor.id },
    })
    expect(factorsOf(store, BOB.email)).toEqual(['backup-codes', 'totp'])
    expect(events.some((event) => event.kind === 'second-factor-removed')).toBe(false)
  })

  it('refuses a post without the CSRF token, and a signed-out one', async () => {
    const store = createMemoryStore()
    const events: AuditEvent[] = []
    const config = twoUsers(store, events)
    const alice = await enrolled(config, 'alice', 'wonderland')
    events.length = 0
    const forged = await alice.send({ path: '/two-factor', body: { action: 'disable' } })
    expect(forged.status).toBe(302)
    expect(forged.headers.get('location')).toContain('error=MissingCSRF')
    expect(factorsOf(store, ALICE.email)).toEqual(['backup-codes', 'totp'])

    const stranger = new Client(config)
    const signedOut = await stranger.send({ path: '/two-factor', body: { csrfToken: await stranger.csrfToken(), action: 'disable' } })
    expect(signedOut.headers.get('location')).toContain('/auth/signin?callbackUrl=')
    expect(factorsOf(store, ALICE.email)).toEqual(['backup-codes', 'totp'])
    expect(events.some((event) => event.kind === 'second-factor-removed')).toBe(false)
  })
})

describe('removeSecondFactors', () => {
  const factor = (id: string, userId: string, type: AdapterSecondFactor['type']): AdapterSecondFactor =>
    ({ id, userId, type, secret: 'x', createdAt: new Date() }) as AdapterSecondFactor

  it('removes the backup codes before the app, and never a row of another user the adapter returned', async () => {
    const deleted: string[] = []
    const rows = [factor('t-1', 'u-1', 'totp'), factor('b-1', 'u-1', 'backup-codes'), factor('t-2', 'u-2', 'totp')]
    const adapter = { listSecondFactors: async () => rows, deleteSecondFactor: async (id: string) => void deleted.push(id) }
    expect(await removeSecondFactors(adapter as never, 'u-1')).toBe(2)
    expect(deleted).toEqual(['b-1', 't-1'])
  })

  it('removes nothing without an adapter that can', async () => {
    expect(await removeSecondFactors(undefined, 'u-1')).toBe(0)
    expect(await removeSecondFactors({ listSecondFactors: async () => [factor('t-1', 'u-1', 'totp')] } as never, 'u-1')).toBe(0)
  })
})

describe('turning two-step verification off with a stale session', () => {
  it('asks for a recent second factor first and removes nothing, whether the browser posts a form or fetches', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const store = createMemoryStore()
      const events: AuditEvent[] = []
      const config = twoUsers(store, events)
      const alice = await enrolled(config, 'alice', 'wonderland')
      // A copied cookie an hour later: the session lives, its last proof is old.
      vi.setSystemTime(Date.now() + 60 * 60_000)
      events.length = 0
      const page = await alice.send({
        path: '/two-factor',
        body: { csrfToken: await alice.csrfToken(), action: 'disable' },
        headers: { accept: 'text/html' },
      })
      expect(page.status).toBe(303)
      expect(page.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
      const fetched = await alice.send({ path: '/two-factor', body: { csrfToken: await alice.csrfToken(), action: 'disable' } })
      expect(fetched.status).toBe(401)
      expect(fetched.headers.get('www-authenticate')).toContain('insufficient_user_authentication')
      expect(factorsOf(store, ALICE.email)).toEqual(['backup-codes', 'totp'])
      expect(events.filter((event) => event.kind === 'second-factor-removed')).toEqual([])
    } finally {
      vi.useRealTimers()
    }
  })
})
