/**
 * Lifecycle events the charts show by the states a run ends in: a second factor turned on (the
 * enrolment chart reaches `enrolled`), a passkey added (the sign-in completion stores a user with
 * an enrolled credential), and the flow events of those requests.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { Client, featureConfig } from '../fixtures/http.js'
import { PasskeyBrowser, passkeyConfig } from '../webauthn/helpers.js'
import { auditTrail } from '../../core/audit.js'

const now = () => Math.floor(Date.now() / 1000)
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')

describe('audit events of factor changes', () => {
  it('records a second factor enrolled once its code is confirmed, not when it is started', async () => {
    const events: AuditEvent[] = []
    const store = createMemoryStore()
    const config = featureConfig({ adapter: MemoryAdapter(store), audit: auditTrail({ sink: (event) => void events.push(event) }) })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    events.length = 0
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ kind: 'flow', flow: 'totp-enrolment', outcome: { type: 'step', state: 'awaitingConfirmation' } })
    const page = await (await client.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    events.length = 0
    await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: wrongCode(totpCode(secret, now())) } })
    expect(events.map((event) => event.kind)).toEqual(['flow'])
    events.length = 0
    const done = await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, now()) } })
    expect(done.status).toBe(200)
    expect(events.map((event) => event.kind)).toEqual(['flow', 'second-factor-enrolled'])
    const userId = events[0]!.userId
    expect(userId).toEqual(expect.any(String))
    expect(events[1]).toMatchObject({ userId })
    // The backup codes the page shows are in no event.
    const codes = [...(await done.clone().text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!)
    for (const code of [secret, ...codes]) expect(JSON.stringify(events)).not.toContain(code)
  })

  it('records a passkey added and its account linked at sign-up, with the passkey factor', async () => {
    const events: AuditEvent[] = []
    const config = passkeyConfig(createMemoryStore(), { audit: auditTrail({ sink: (event) => void events.push(event) }) })
    const browser = new PasskeyBrowser(config)
    await browser.register({ email: 'grace@example.com' })
    const kinds = events.map((event) => event.kind)
    expect(kinds).toContain('passkey-added')
    expect(kinds).toContain('account-linked')
    const signIn = events.filter((event) => event.kind === 'flow').at(-1)!
    expect(signIn).toMatchObject({ flow: 'webauthn-signin', provider: 'passkey', outcome: { type: 'signed-in' } })
    const added = events.find((event) => event.kind === 'passkey-added')!
    expect(added.userId).toBe(signIn.userId)
    expect(JSON.stringify(events)).not.toContain('grace@example.com')

    events.length = 0
    await browser.signOut()
    await browser.signIn()
    // The options request rests the flow at its challenge; the answer signs in.
    expect(events.map((event) => event.kind)).toEqual(['sign-out', 'flow', 'flow'])
    expect(events[1]!.outcome).toMatchObject({ type: 'step' })
    expect(events[2]).toMatchObject({ userId: signIn.userId, outcome: { type: 'signed-in' } })
  })
})
