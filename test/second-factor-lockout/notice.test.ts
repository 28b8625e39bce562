/**
 * Issue #48 item 3, telling the owner: once someone's wrong codes spend the user's limit, the
 * owner gets one e-mail per window at the address the adapter stores (through the configured
 * e-mail provider, as a notice, not a sign-in link), however many more wrong codes come and from
 * however many instances; `checkCode` calls its hook once; the default message says what happened.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { SendVerificationRequestParams } from '../../core/email/provider.js'
import { renderMessage } from '../../core/email/provider.js'
import { Auth, setClientAddress } from '../../core/index.js'
import { CLEAN_CLIENT_CODES, MAX_CODE_ATTEMPTS, MAX_USER_ATTEMPTS, USER_ATTEMPT_WINDOW } from '../../core/second-factor/index.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import Email from '../../providers/email.js'
import { ALICE, authRequest, Client, credentialsProvider, featureConfig, ORIGIN } from '../fixtures/http.js'
import { wrongCode } from './codes.js'
import { enrolledUser } from './enrolled.js'

const STEP = '/step/signin-completion'
const ATTACKER = '203.0.113.7'

const T0 = Math.ceil(Date.now() / 1000 / 3600) * 3600
let clock = T0
beforeEach(() => {
  clock = T0
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(T0 * 1000)
})
afterEach(() => vi.useRealTimers())

describe('checkCode', () => {
  it('calls onCodesTried once per window under 50 concurrent wrong codes, from fifty addresses', async () => {
    const user = await enrolledUser(memoryAuthStore(), () => clock)
    const { checkCode } = await import('../../core/second-factor/index.js')
    const onCodesTried = vi.fn(async () => {})
    const check = (i: number) =>
      checkCode({ ...inputOf(user), code: wrongCode(user.secret, clock), challenge: `c${i}`, client: { address: `192.0.2.${i}` }, onCodesTried })
    await Promise.all(Array.from({ length: 50 }, (_, i) => check(i)))
    expect(onCodesTried).toHaveBeenCalledTimes(1)
    // More wrong codes in the same window tell no one again.
    await check(50)
    expect(onCodesTried).toHaveBeenCalledTimes(1)
  })

  it('calls it with the check that passes the limit, and a failing notice does not fail the check', async () => {
    const user = await enrolledUser(memoryAuthStore(), () => clock)
    const { checkCode } = await import('../../core/second-factor/index.js')
    const onCodesTried = vi.fn(async () => {
      throw new Error('mail server down')
    })
    const results = []
    for (let i = 0; i < MAX_USER_ATTEMPTS + 2; i++) {
      results.push(await checkCode({ ...inputOf(user), code: wrongCode(user.secret, clock), challenge: `c${i}`, onCodesTried }))
    }
    expect(onCodesTried).toHaveBeenCalledTimes(1)
    expect(results.every((r) => !r.ok && r.reason === 'wrongCode')).toBe(true)
  })
})

/** What `checkCode` needs for the enrolled user of `enrolledUser` (its adapter is not exposed). */
function inputOf(user: Awaited<ReturnType<typeof enrolledUser>>) {
  return { ...user.inputFor(clock) }
}

describe('through Auth', () => {
  async function setUp() {
    const outbox: SendVerificationRequestParams[] = []
    const memory = createMemoryStore()
    // The credentials sign-in stores the user with its address: the notice goes to this address.
    const adapter = MemoryAdapter(memory)
    const email = Email({ sendVerificationRequest: async (params) => void outbox.push(params) })
    const configs = [0, 1, 2].map(() => featureConfig({ adapter, store: undefined, providers: [credentialsProvider(), email] }))
    const store = memoryAuthStore()
    for (const config of configs) config.store = store
    const owner = new Client(configs[0]!)
    await owner.signIn({ username: 'alice', password: 'wonderland' })
    await owner.send({ path: '/two-factor', body: { csrfToken: await owner.csrfToken() } })
    const page = await (await owner.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    await owner.send({ path: '/step/totp-enrolment', body: { csrfToken: await owner.csrfToken(), code: totpCode(secret, clock) } })
    return { configs, secret, outbox }
  }

  async function wrongFrom(config: AuthConfig, secret: string, codes: number) {
    const client = new Client(config)
    const send = (init: Parameters<Client['send']>[0]) =>
      Auth(setClientAddress(authRequest({ ...init, path: `/auth${init.path}`, cookies: client.jar }), ATTACKER), config).then((r) => {
        client.jar.store(r)
        return r
      })
    const csrf = async () => ((await (await send({ path: '/csrf' })).json()) as { csrfToken: string }).csrfToken
    await send({ path: '/callback/credentials', body: { username: 'alice', password: 'wonderland', csrfToken: await csrf() } })
    for (let i = 0; i < codes; i++) await send({ path: STEP, body: { csrfToken: await csrf(), code: wrongCode(secret, clock) } })
  }

  it('e-mails the stored address once, as a notice, however many instances see the wrong codes', async () => {
    const { configs, secret, outbox } = await setUp()
    const before = outbox.length
    const rounds = Math.ceil((MAX_USER_ATTEMPTS + CLEAN_CLIENT_CODES + 5) / MAX_CODE_ATTEMPTS)
    for (let round = 0; round < rounds; round++) await wrongFrom(configs[round % 3]!, secret, MAX_CODE_ATTEMPTS)
    const notices = outbox.slice(before)
    expect(notices).toHaveLength(1)
    expect(notices[0]!.identifier).toBe(ALICE.email)
    expect(notices[0]!.notice?.kind).toBe('second-factor-codes-tried')
    expect(notices[0]!.url).toBe(`${ORIGIN}/auth/signin`)
    expect(configs[0]!.logger.warn.mock.calls.concat(configs[1]!.logger.warn.mock.calls, configs[2]!.logger.warn.mock.calls).filter(([code]) => code === 'second-factor-codes-tried')).toHaveLength(1)
    // The next window, a new notice.
    vi.setSystemTime((clock += USER_ATTEMPT_WINDOW + 1) * 1000)
    await wrongFrom(configs[0]!, secret, MAX_CODE_ATTEMPTS)
    await wrongFrom(configs[1]!, secret, MAX_CODE_ATTEMPTS)
    await wrongFrom(configs[2]!, secret, MAX_CODE_ATTEMPTS)
    expect(outbox.slice(before).filter((m) => m.notice)).toHaveLength(2)
  })

  it('renders the notice, not a sign-in message, in the default senders', () => {
    const message = renderMessage({
      identifier: 'alice@example.com',
      url: `${ORIGIN}/auth/signin`,
      token: 'unused',
      expires: new Date(),
      provider: { id: 'email', type: 'email', name: 'Email', from: 'Auth <auth@example.com>', sendVerificationRequest: () => {} } as never,
      theme: {},
      request: new Request(ORIGIN),
      notice: { kind: 'second-factor-codes-tried', subject: 'Someone is trying codes', text: 'First <b>.\n\nSecond.' },
    })
    expect(message.subject).toBe('Someone is trying codes')
    expect(message.text).toBe('First <b>.\n\nSecond.')
    expect(message.html).toContain('<p>First &lt;b&gt;.</p><p>Second.</p>')
    expect(message.html).not.toContain('Sign in')
  })
})
