/**
 * Step-up with a code sent to the account's address over real SMTP (loopback), with JWT and
 * database sessions: the stale session asks for the code, the message goes to the signed-in
 * user's address (never to one the request names), a wrong code is counted and leaves the action
 * undone, the right one resumes it once.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { memoryAuthStore } from '../../core/store/index.js'
import Nodemailer from '../../providers/nodemailer.js'
import { startSmtpServer, type RunningSmtpServer } from '../fixtures/smtp.js'
import { ALICE, Client, credentialsProvider, ORIGIN, featureConfig } from '../fixtures/http.js'

const HTML = { accept: 'text/html' }
const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`
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

function app(strategy: 'jwt' | 'database') {
  const store = createMemoryStore()
  // The code goes to the address the adapter stores: a JWT credentials user is stored beforehand
  // (a database session's sign-in stores it itself).
  if (strategy === 'jwt') store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
  const config = featureConfig({
    adapter: MemoryAdapter(store),
    session: { strategy },
    store: memoryAuthStore(),
    providers: [credentialsProvider(), Nodemailer({ server: smtp.url, from: 'authchart <no-reply@authchart.test>' })],
  })
  return { store, config }
}

async function post(client: Client, path: string, body: Record<string, string>) {
  return client.send({ path, body: { ...body, csrfToken: await client.csrfToken() }, headers: HTML })
}

const codeIn = (text: string | undefined) => /\b([0-9A-Z]{6,8})\b/.exec((text ?? '').split('code')[1] ?? '')?.[1]

describe.each(['jwt', 'database'] as const)('step-up with an e-mailed code (%s sessions)', (strategy) => {
  it("sends a code to the account's address and resumes the action once it is typed", async () => {
    const { store, config } = app(strategy)
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    vi.setSystemTime(Date.now() + 11 * 60_000)
    expect((await post(alice, '/two-factor', {})).headers.get('location')).toBe(STEP_PAGE)
    const page = await (await alice.send({ path: '/step/reauthenticate', headers: HTML })).text()
    expect(page).toContain('Send a code to a***@example.com')

    // The address is the account's: a field naming another is not read.
    const sent = await post(alice, '/step/reauthenticate', { event: 'reauth.sendEmailCode', email: 'mallory@evil.example' })
    expect(sent.headers.get('location')).toBe(STEP_PAGE)
    const mail = await smtp.next()
    expect(mail.to && 'text' in mail.to ? mail.to.text : '').toBe('alice@example.com')
    const code = codeIn(mail.text)
    expect(code).toBeDefined()

    const wrong = await post(alice, '/step/reauthenticate', { event: 'reauth.emailCode', code: '00000000' })
    expect(wrong.headers.get('location')).toBe(STEP_PAGE)
    expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-failed')
    expect(store.secondFactors.size).toBe(0)

    const resumed = await post(alice, '/step/reauthenticate', { event: 'reauth.emailCode', code: code! })
    expect(await resumed.text()).toContain('action="/auth/two-factor"')
    expect((await post(alice, '/two-factor', {})).headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)
  })
})
