/**
 * E-mail sign-in through `Auth` on the memory adapter, down to what the mutation group of
 * `core/flows/email/flow.ts` changes and test/mutation/email.test.ts leaves: which stored user an
 * address adopts (never a passkey sign-up nobody verified) and when it was verified, the links that
 * still sign in (without an address, with an empty one, under a rotated or the provider's own
 * secret), and what an address the normaliser refuses logs.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { SECRET } from '../fixtures/http.js'
import { addressBlind, emailConfig, EmailClient, lastLink } from '../email/helpers.js'

const ORIGIN = 'https://authchart.test'
const SESSION_COOKIE = '__Secure-authjs.session-token'


/** Every logged error as "Name: message". */
function errors(config: ReturnType<typeof emailConfig>['config']): string[] {
  return config.logger.error.mock.calls.map(([error]) => `${(error as Error).name}: ${(error as Error).message}`)
}

/** Asks for a link to `email`, changes it with `edit`, and presses the confirmation's button. */
async function signInWith(setup: ReturnType<typeof emailConfig>, email: string, edit: (link: URL) => void = () => {}) {
  const client = new EmailClient(setup.config)
  await client.requestLink(email)
  const link = lastLink(setup.outbox)
  edit(link)
  const response = await client.confirm(link)
  return { client, response }
}

describe('the user an e-mail sign-in adopts', () => {
  it('is created with the address verified now', async () => {
    const setup = emailConfig()
    const before = Date.now()
    const { client } = await signInWith(setup, 'new@example.com')
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
    const [user] = [...setup.store.users.values()]
    expect(user!.emailVerified!.getTime()).toBeGreaterThanOrEqual(before - 1000)
    expect(user!.emailVerified!.getTime()).toBeLessThanOrEqual(Date.now() + 1000)
  })

  it('is an existing user, whose address is marked verified now', async () => {
    const setup = emailConfig()
    await setup.adapter.createUser!({ id: 'old', email: 'old@example.com', emailVerified: null })
    const before = Date.now()
    await signInWith(setup, 'old@example.com')
    const user = await setup.adapter.getUser!('old')
    expect(user!.emailVerified!.getTime()).toBeGreaterThanOrEqual(before - 1000)
    expect(user!.emailVerified!.getTime()).toBeLessThanOrEqual(Date.now() + 1000)
  })

  it('is never a passkey sign-up whose address nobody verified: AccountNotLinked, logged, no session', async () => {
    const setup = emailConfig()
    const squatter = await setup.adapter.createUser!({ id: 'squatter', email: 'victim@example.com', emailVerified: null })
    await setup.adapter.createAuthenticator!({
      userId: squatter.id,
      providerAccountId: 'passkey-1',
      credentialID: 'cred-1',
      credentialPublicKey: 'key',
      counter: 0,
      credentialDeviceType: 'singleDevice',
      credentialBackedUp: false,
      transports: null,
    } as never)
    const { client, response } = await signInWith(setup, 'victim@example.com')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(errors(setup.config)).toContain(
      'AccountNotLinked: The account with this e-mail address signed up with a passkey and never verified the address',
    )
    const [error] = setup.config.logger.error.mock.calls.at(-1)! as [Error & { cause: Record<string, unknown> }]
    expect(error.cause.provider).toBe('email')
    expect((await setup.adapter.getUser!('squatter'))!.emailVerified).toBeNull()
  })
})

describe('a sign-in link', () => {
  it.each([
    ['without the address', (link: URL) => link.searchParams.delete('email')],
    ['with an empty address', (link: URL) => link.searchParams.set('email', '')],
  ])('signs in %s, through an adapter that finds the token by itself (the token names the address)', async (_name, edit) => {
    const setup = emailConfig({ overrides: { adapter: addressBlind(MemoryAdapter(createMemoryStore())) } })
    const { client, response } = await signInWith(setup, 'alice@example.com', edit)
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('signs in without the address when the link signs in directly (no confirmation page)', async () => {
    const setup = emailConfig({ provider: { link: 'direct' } as never, overrides: { adapter: addressBlind(MemoryAdapter(createMemoryStore())) } })
    const client = new EmailClient(setup.config)
    await client.requestLink('alice@example.com')
    const link = lastLink(setup.outbox)
    link.searchParams.delete('email')
    const response = await client.open(link)
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('signs in after the secret was rotated, the new one first', async () => {
    const setup = emailConfig({ overrides: { secret: [`new-${SECRET}`, SECRET] } })
    const { client, response } = await signInWith(setup, 'alice@example.com')
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it("signs in under the provider's own secret", async () => {
    const setup = emailConfig({ provider: { secret: `provider-${SECRET}` } as never })
    const { client, response } = await signInWith(setup, 'alice@example.com')
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })
})

describe('an address the normaliser refuses', () => {
  it('logs the address and "Invalid email address format." when the normaliser returns no string', async () => {
    // A number, and a list holding an address (which reads like the address where text is expected).
    for (const normalised of [42, ['alice@example.com']]) {
      const setup = emailConfig({ provider: { normalizeIdentifier: () => normalised } as never })
      const response = await new EmailClient(setup.config).requestLink('alice@example.com')
      expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
      expect(errors(setup.config)).toEqual(['EmailSignInError: Refused the address "alice@example.com": Invalid email address format.'])
      expect(setup.outbox).toEqual([])
    }
  })

  it('is refused the same when the normaliser throws something that is not an error', async () => {
    const setup = emailConfig({
      provider: {
        normalizeIdentifier: () => {
          throw null
        },
      } as never,
    })
    const response = await new EmailClient(setup.config).requestLink('alice@example.com')
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    expect(errors(setup.config)).toHaveLength(1)
    expect(errors(setup.config)[0]).toMatch(/^EmailSignInError: Refused the address "alice@example.com": /)
  })
})

describe('an e-mail sign-in in a browser with a JWT session of another user', () => {
  it('signs in through an adapter that keeps no sessions: no session row is asked for or deleted', async () => {
    const memory = MemoryAdapter(createMemoryStore())
    const { createSession: _c, getSessionAndUser: _g, updateSession: _u, deleteSession: _d, ...withoutSessions } = memory
    const setup = emailConfig({ overrides: { adapter: withoutSessions as Adapter } })
    await signInWith(setup, 'alice@example.com')
    const { client } = await signInWith(setup, 'bob@example.com')
    expect(((await client.session()).body as { user?: { email?: string } }).user?.email).toBe('bob@example.com')
    await client.requestLink('alice@example.com')
    const response = await client.confirm(lastLink(setup.outbox))
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(((await client.session()).body as { user?: { email?: string } }).user?.email).toBe('alice@example.com')
    expect(setup.config.logger.error).not.toHaveBeenCalled()
  })
})
