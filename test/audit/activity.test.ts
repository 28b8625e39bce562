/**
 * `GET {basePath}/audit`: the signed-in user's own events, as JSON or a page, from a PostgreSQL
 * audit store (PGlite). An attacker signed in as one user tries to read another's: by query,
 * by a forged cookie, with a store that answers too much.
 */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresAuditStore } from '../../adapters/postgres-audit.js'
import { describeEvent } from '../../core/audit/activity.js'
import type { AuditEvent, AuditStore } from '../../core/audit/types.js'
import { Client, credentialsProvider, ORIGIN, testConfig, featureConfig } from '../fixtures/http.js'
import { reauthenticateAlice } from './reauthentication.js'
import { auditTrail } from '../../core/audit.js'

const HTML = { accept: 'text/html,application/xhtml+xml' }
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
/** Anyone signs in with the password `pw`; their id is their name. */
const everyone = credentialsProvider((c) => (c.password === 'pw' ? { id: String(c.username), name: String(c.username) } : null))

let db: PGlite
let store: ReturnType<typeof PostgresAuditStore>
beforeAll(async () => {
  db = new PGlite()
  store = PostgresAuditStore(db)
  await store.migrate()
})
afterAll(() => db?.close())

async function signedIn(config: ReturnType<typeof testConfig>, username: string) {
  const client = new Client(config)
  const csrfToken = await client.csrfToken()
  await client.send({ path: '/callback/credentials', body: { username, password: 'pw', csrfToken }, headers: { 'user-agent': CHROME } })
  return client
}

describe('the activity page', () => {
  it('lists only the signed-in user\'s own events, newest first, as JSON', async () => {
    const config = featureConfig({ providers: [everyone], audit: auditTrail({ sink: store }) })
    const alice = await signedIn(config, 'alice')
    const mallory = await signedIn(config, 'mallory')
    await alice.signIn({ username: 'alice', password: 'wrong' })
    await alice.signOut()
    const aliceAgain = await signedIn(config, 'alice')

    const response = await aliceAgain.send({ path: '/audit' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('cache-control')).toContain('no-store')
    const listed = (await response.json()) as { kind: string; outcome?: string; userAgent?: string; provider?: string }[]
    expect(listed.map((event) => [event.kind, event.outcome])).toEqual([
      ['flow', 'signed-in'],
      ['sign-out', undefined],
      ['flow', 'signed-in'],
    ])
    expect(listed[0]).toMatchObject({ provider: 'credentials', userAgent: 'Chrome', amr: ['pwd'] })
    // The states passed and the hashed address are the operator's, not shown to the user.
    expect(JSON.stringify(listed)).not.toMatch(/states|hmac:/)

    const mine = (await (await mallory.send({ path: '/audit' })).json()) as { id: string }[]
    expect(mine).toHaveLength(1)
    const aliceIds = new Set(listed.map((event) => (event as { id?: string }).id))
    expect(mine.some((event) => aliceIds.has(event.id))).toBe(false)
  })

  it('ignores a user named in the query, and answers 401 to a forged or missing session', async () => {
    const config = featureConfig({ providers: [everyone], audit: auditTrail({ sink: store }) })
    await signedIn(config, 'victim')
    const mallory = await signedIn(config, 'mallory2')
    const probing = (await (await mallory.send({ path: '/audit', query: { userId: 'victim', user: 'victim' } })).json()) as { id: string }[]
    const own = (await store.listForUser('mallory2', { limit: 50 })).map((event) => event.id)
    expect(probing.map((event) => event.id)).toEqual(own)

    const anonymous = new Client(config)
    const refused = await anonymous.send({ path: '/audit' })
    expect(refused.status).toBe(401)
    expect(await refused.json()).toBeNull()
    anonymous.jar.cookies.set('__Secure-authjs.session-token', 'forged.token.value')
    expect((await anonymous.send({ path: '/audit' })).status).toBe(401)
  })

  it('shows a page to a browser, and sends a signed-out browser to sign in first', async () => {
    const config = featureConfig({ providers: [everyone], audit: auditTrail({ sink: store }) })
    await (await signedIn(config, 'carol')).signOut()
    const carol = await signedIn(config, 'carol')
    const page = await carol.send({ path: '/audit', headers: HTML })
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    const html = await page.text()
    expect(html).toContain('<h1>Recent activity</h1>')
    expect(html).toContain('<strong>Signed in with credentials</strong>')
    expect(html).toContain('<strong>Signed out</strong>')
    expect(html).toMatch(/UTC, Chrome</)

    const away = await new Client(config).send({ path: '/audit', headers: HTML })
    expect(away.status).toBe(302)
    expect(away.headers.get('location')).toBe(`${ORIGIN}/auth/signin?callbackUrl=${encodeURIComponent(`${ORIGIN}/auth/audit`)}`)
  })

  it('drops rows of other users that a store answers, and says so when no store can list events', async () => {
    const theirs = { v: 1, id: 'x', time: new Date().toISOString(), requestId: 'r', kind: 'sign-out', userId: 'someone-else', client: {} } as const
    const leaky: AuditStore = { write: () => {}, listForUser: async () => [theirs] }
    const config = featureConfig({ providers: [everyone], audit: auditTrail({ sink: leaky }) })
    const dave = await signedIn(config, 'dave')
    expect(await (await dave.send({ path: '/audit' })).json()).toEqual([])

    const none = featureConfig({ providers: [everyone], audit: auditTrail({ sink: () => {} }) })
    const erin = await signedIn(none, 'erin')
    const refused = await erin.send({ path: '/audit' })
    expect(refused.status).toBe(400)
    expect(none.logger.error).toHaveBeenCalled()
  })

  it('lists a completed re-authentication once, with the factor and the action, and no sign-in for it', async () => {
    const config = featureConfig({ audit: auditTrail({ sink: store }) })
    const alice = await reauthenticateAlice(config)
    const listed = (await (await alice.send({ path: '/audit' })).json()) as { kind: string; outcome?: string; amr?: string[]; action?: string }[]
    const mine = listed.filter((event) => event.kind === 'reauthenticated')
    expect(mine).toEqual([expect.objectContaining({ kind: 'reauthenticated', outcome: 'reauthenticated', amr: ['pwd'], action: 'app' })])
    // Her sign-in, the re-authentication's start, and its completion: one sign-in only.
    expect(listed.filter((event) => event.outcome === 'signed-in')).toHaveLength(1)
    const html = await (await alice.send({ path: '/audit', headers: HTML })).text()
    expect(html.match(/Confirmed it&#39;s you to continue|Confirmed it's you to continue/g)).toHaveLength(1)
  })

  it('describes each kind of event in words', () => {
    const base = { v: 1, id: 'i', time: '2026-11-26T20:00:00.000Z', requestId: 'r', client: {} } as const
    const kinds = ['sign-out', 'sign-out-everywhere', 'session-revoked', 'second-factor-enrolled', 'passkey-added', 'rate-limited', 'reauthenticated'] as const
    const lines = kinds.map(
      (kind) => describeEvent({ ...base, kind } as AuditEvent),
    )
    expect(new Set(lines).size).toBe(lines.length)
    expect(describeEvent({ ...base, kind: 'account-linked', provider: 'github' })).toBe('Linked a sign-in method with github')
    expect(describeEvent({ ...base, v: 2, kind: 'reauthenticated', action: 'add-passkey', amr: ['pwd'] })).toBe("Confirmed it's you to add a passkey")
    expect(describeEvent({ ...base, v: 2, kind: 'reauthenticated', action: 'something-else' })).toBe("Confirmed it's you")
    expect(describeEvent({ ...base, kind: 'flow', provider: 'email', outcome: { type: 'step', state: 'awaitingCode' } })).toBe('Sign-in with email started')
    expect(describeEvent({ ...base, kind: 'flow', provider: 'email', outcome: { type: 'refused', error: 'InvalidCode' } })).toBe('Sign-in with email refused (InvalidCode)')
  })
})
