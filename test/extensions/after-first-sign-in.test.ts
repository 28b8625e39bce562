/**
 * A step at `afterFirstSignIn` runs until the user has completed it once, recorded per user and
 * step version (issue 24, finding 6): declining or abandoning it is not completing it, whichever
 * way the user signs in next. Before, the step ran only while the user row was new, so a user who
 * declined the terms and then signed in by e-mail code got a session without ever accepting.
 */
import { object } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { termsExtension } from 'authchart/extensions/terms'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import { CONTINUE, DENY, type FlowExtension } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import type { Adapter } from '../../core/adapters.js'
import type { AuthConfig } from '../../core/types.js'
import Email from '../../providers/email.js'
import type { SendVerificationRequestParams } from '../../core/email/provider.js'
import { EmailClient } from '../email/helpers.js'
import { ALICE, credentialsProvider, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const STEP_PAGE = `${ORIGIN}/auth/step/signin-completion`

function setup(options: { at?: 'afterFirstSignIn' | 'beforeSession'; adapter?: (memory: Adapter) => Adapter; store?: MemoryStore; extensions?: FlowExtension[] } = {}) {
  const store = options.store ?? createMemoryStore()
  const memory = MemoryAdapter(store)
  const accepted = new Map<string, string>()
  const outbox: SendVerificationRequestParams[] = []
  const logger = spyLogger()
  const config = {
    secret: SECRET,
    secondFactor: totp(),
    stepUp: stepUp(),
    trustHost: true,
    logger,
    adapter: options.adapter ? options.adapter(memory) : memory,
    session: { strategy: 'database' },
    providers: [
      credentialsProvider(),
      Email({ code: true, sendVerificationRequest: async (params) => void outbox.push(params) }),
    ],
    extensions: options.extensions ?? [
      termsExtension({
        version: '2026-01',
        html: '<p>Be excellent to each other.</p>',
        acceptedVersion: (userId) => accepted.get(userId) ?? null,
        recordAcceptance: (userId, version) => void accepted.set(userId, version),
        at: options.at ?? 'afterFirstSignIn',
      }),
    ],
  } as AuthConfig & { logger: typeof logger }
  return { config, store, accepted, outbox, logger }
}

async function answer(client: EmailClient, event: string): Promise<Response> {
  return client.send({ path: '/step/signin-completion', body: { csrfToken: await client.csrfToken(), event } })
}

/** Signs in by e-mail code as alice@example.com in a fresh browser. */
async function signInByCode(config: AuthConfig, outbox: SendVerificationRequestParams[]): Promise<{ client: EmailClient; response: Response }> {
  const client = new EmailClient(config)
  await client.requestLink('alice@example.com')
  const response = await client.enterCode(outbox.at(-1)!.code!)
  return { client, response }
}

describe('a step after the first sign-in', () => {
  it('asks again, on another way of signing in, a user who declined the terms', async () => {
    const { config, store, outbox } = setup()
    const first = new EmailClient(config)
    const created = await first.signIn({ username: 'alice', password: 'wonderland' })
    expect(created.headers.get('location')).toBe(STEP_PAGE)
    const declined = await answer(first, 'terms.decline')
    expect(declined.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied&code=terms.declined`)
    expect(store.users.size).toBe(1)
    // The user row exists now; the next sign-in, by e-mail code, is no longer the first.
    const { client, response } = await signInByCode(config, outbox)
    expect(response.headers.get('location')).toBe(STEP_PAGE)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(store.sessions.size).toBe(0)
    const accepted = await answer(client, 'terms.accept')
    expect(accepted.headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })
})

/** A step with no record of its own: a welcome page, answered `welcome.done` or `welcome.skip`. */
function welcome(stepVersion?: string): FlowExtension {
  return defineExtension({
    id: 'welcome',
    version: '1',
    ...(stepVersion ? { stepVersion } : {}),
    at: 'afterFirstSignIn',
    initial: 'welcoming',
    states: {
      welcoming: {
        tags: 'awaitsRequest',
        meta: { step: { page: 'welcome', events: { 'welcome.done': object(), 'welcome.skip': object() } } },
        on: { 'welcome.done': CONTINUE, 'welcome.skip': DENY },
      },
    },
    pages: { welcome: () => ({ title: 'Welcome', html: '<h1>Welcome</h1>' }) },
  })
}

describe('completion of a step after the first sign-in', () => {
  it('is recorded per user and step version: an abandoned step is asked again, a completed one never, a new version once more', async () => {
    const { config, store, outbox } = setup({ extensions: [welcome()] })
    const abandoned = new EmailClient(config)
    expect((await abandoned.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(STEP_PAGE)
    // Never answered: the next sign-in, another way, asks again.
    const { client, response } = await signInByCode(config, outbox)
    expect(response.headers.get('location')).toBe(STEP_PAGE)
    expect((await answer(client, 'welcome.done')).headers.get('location')).toBe(ORIGIN)
    const [user] = [...store.users.values()]
    expect(store.completedSteps.get(user!.id)).toEqual([{ stepId: 'welcome', version: '1' }])
    // Completed: neither way asks again.
    expect((await new EmailClient(config).signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(ORIGIN)
    expect((await signInByCode(config, outbox)).response.headers.get('location')).toBe(ORIGIN)
    // A new version of the step is a step not completed yet.
    const next = setup({ store, extensions: [welcome('2')] })
    expect((await new EmailClient(next.config).signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(STEP_PAGE)
  })

  it('is recorded under the id authorize returned for a credentials user kept out of the database', async () => {
    const { config, store } = setup({ extensions: [welcome()] })
    const jwt = { ...config, session: { strategy: 'jwt' as const }, providers: [credentialsProvider()] }
    const client = new EmailClient(jwt)
    expect((await client.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(STEP_PAGE)
    expect((await answer(client, 'welcome.done')).headers.get('location')).toBe(ORIGIN)
    expect(store.users.size).toBe(0)
    expect(store.completedSteps.get(ALICE.id)).toEqual([{ stepId: 'welcome', version: '1' }])
    expect((await new EmailClient(jwt).signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(ORIGIN)
  })

  it('runs on every sign-in when the adapter cannot record it, warned once at load', async () => {
    const { config, logger } = setup({
      extensions: [welcome()],
      adapter: ({ getCompletedSteps: _get, recordCompletedStep: _record, ...rest }) => rest,
    })
    for (let i = 0; i < 2; i++) {
      const client = new EmailClient(config)
      expect((await client.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(STEP_PAGE)
      expect((await answer(client, 'welcome.done')).headers.get('location')).toBe(ORIGIN)
    }
    expect(logger.warn.mock.calls.filter(([code]) => code === 'after-first-sign-in-unrecorded')).toHaveLength(1)
    expect(setup({ extensions: [welcome()] }).logger.warn).not.toHaveBeenCalledWith('after-first-sign-in-unrecorded')
  })

  it('refuses the sign-in, with no session, when completed steps cannot be read or recorded', async () => {
    const failing = (method: 'getCompletedSteps' | 'recordCompletedStep') =>
      setup({
        extensions: [welcome()],
        adapter: (memory) => ({ ...memory, [method]: async () => { throw new Error('database unavailable') } }),
      })
    const lookup = failing('getCompletedSteps')
    const client = new EmailClient(lookup.config)
    expect((await client.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(lookup.store.sessions.size).toBe(0)
    const record = failing('recordCompletedStep')
    const other = new EmailClient(record.config)
    await other.signIn({ username: 'alice', password: 'wonderland' })
    expect((await answer(other, 'welcome.done')).headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(other.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(record.store.sessions.size).toBe(0)
  })
})

describe('a step before the session', () => {
  it('asks again, on another way of signing in, a user who declined the terms', async () => {
    const { config, outbox } = setup({ at: 'beforeSession' })
    const first = new EmailClient(config)
    expect((await first.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(STEP_PAGE)
    expect((await answer(first, 'terms.decline')).headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied&code=terms.declined`)
    const { client, response } = await signInByCode(config, outbox)
    expect(response.headers.get('location')).toBe(STEP_PAGE)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect((await answer(client, 'terms.accept')).headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })
})
