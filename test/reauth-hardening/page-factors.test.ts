/**
 * Issue 43, item 7, over HTTP: the re-authentication page offers only the factors the user has
 * (no password form for a user without a credentials account), its heading names the action being
 * confirmed ("sign out everywhere, this browser too" after that button, not another action), and
 * the e-mailed code's subject says it confirms that action rather than "Sign in to …".
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { memoryAuthStore } from '../../core/store/index.js'
import Nodemailer from '../../providers/nodemailer.js'
import { startSmtpServer, type RunningSmtpServer } from '../fixtures/smtp.js'
import { Client, credentialsProvider, featureConfig } from '../fixtures/http.js'
import { HTML, later, post } from './fixture.js'

let smtp: RunningSmtpServer
beforeAll(async () => {
  smtp = await startSmtpServer()
})
afterAll(async () => {
  await smtp?.close()
})
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

function app() {
  const store: MemoryStore = createMemoryStore()
  const config = featureConfig({
    adapter: MemoryAdapter(store),
    session: { strategy: 'database' },
    store: memoryAuthStore(),
    providers: [credentialsProvider(), Nodemailer({ server: smtp.url, from: 'authchart <no-reply@authchart.test>' })],
  })
  return { store, config }
}

const page = async (client: Client) => (await client.send({ path: '/step/reauthenticate', headers: HTML })).text()

describe('the re-authentication page offers only the factors the user has', () => {
  it('shows no password form to a user whose only way in is their e-mail address', async () => {
    const { store, config } = app()
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    // Alice's account becomes an e-mail-only one: no credentials account is linked any more.
    for (const [key, account] of store.accounts) if ((account.type as string) === 'credentials') store.accounts.delete(key)
    later(11)
    await post(alice, '/two-factor', {})
    const html = await page(alice)
    expect(html).toContain('Send a code to a***@example.com')
    expect(html).not.toContain('name="password"')
    // Posting a password anyway proves nothing: the flow does not take the event.
    const refused = await post(alice, '/step/reauthenticate', { event: 'reauth.password', username: 'alice', password: 'wonderland' })
    expect(refused.headers.get('location')).toMatch(/\/auth\/error\?error=/)
  })

  it('still shows it to a user with a credentials account', async () => {
    const { config } = app()
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    later(11)
    await post(alice, '/two-factor', {})
    expect(await page(alice)).toContain('name="password"')
  })
})

describe('the page and the message name the action being confirmed', () => {
  it('says "sign out everywhere, this browser too" after that button, and "every other session" after the other', async () => {
    const { config } = app()
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    later(11)
    await post(alice, '/sessions', { revoke: 'all' })
    const everywhere = await page(alice)
    expect(everywhere).toContain("Confirm it's you to sign out everywhere, this browser too")
    await post(alice, '/sessions', { revoke: 'others' })
    expect(await page(alice)).toContain("Confirm it's you to sign out of every other session")
  })

  it('mails a code whose subject says it confirms the action, not "Sign in to …"', async () => {
    const { config } = app()
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    later(11)
    await post(alice, '/sessions', { revoke: 'all' })
    await post(alice, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
    const mail = await smtp.next()
    expect(mail.subject).not.toMatch(/^Sign in to/)
    expect(mail.subject).toContain('sign out everywhere, this browser too')
    expect(mail.text).toContain('sign out everywhere, this browser too')
    expect(mail.text).not.toContain('Sign in to')
  })
})
