/**
 * Pre-account takeover through a passkey sign-up, written from Mallory's side: she signs up with a
 * passkey under the victim's e-mail address before the victim ever comes, hoping that the victim's
 * later sign-in (an e-mail link, OAuth with `allowDangerousEmailAccountLinking`, credentials with
 * it) lands in her user, which her passkey still opens. Each test ends by checking that the victim
 * never has a session in a user Mallory's passkey signs into.
 */
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { AuthConfig } from '../../core/types.js'
import Credentials from '../../providers/credentials.js'
import Email from '../../providers/email.js'
import Passkey from '../../providers/passkey.js'
import { EmailClient, lastLink, type Outbox } from '../email/helpers.js'
import { Client, ORIGIN } from '../fixtures/http.js'
import { OP_ACCOUNT, startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { PasskeyBrowser, passkeyConfig, SESSION_COOKIE } from './helpers.js'

const VICTIM = 'newvictim@example.com'

/** An e-mail provider whose messages land in `outbox`: the victim's mailbox. */
function mailbox(outbox: Outbox) {
  return Email({ sendVerificationRequest: async (params) => void outbox.push(params) })
}

/**
 * Mallory asks to sign up as `email` every way she can: Auth.js's options request (GET), the
 * built-in page's (a POST with a CSRF token), then a guessed code. Whatever registration options
 * she gets, she completes with her own authenticator. Returns her browser.
 */
async function malloryTriesToSignUp(config: AuthConfig, email: string): Promise<PasskeyBrowser> {
  const mallory = new PasskeyBrowser(config)
  const register = (options: unknown) =>
    mallory.answer('register', mallory.authenticator.register(options as PublicKeyCredentialCreationOptionsJSON))
  const asked = await mallory.options({ email })
  if (asked.response.status === 200 && asked.body.action === 'register') {
    await register(asked.body.options)
    return mallory
  }
  const csrfToken = await mallory.client.csrfToken()
  await mallory.client.send({ path: '/webauthn-options/passkey', body: { email, csrfToken } })
  const guessed = await mallory.client.send({ path: '/webauthn-options/passkey', body: { code: 'AAAAAA', csrfToken } })
  const body = (await guessed.json().catch(() => null)) as { options?: unknown } | null
  if (guessed.status === 200 && body?.options) await register(body.options)
  return mallory
}

/** The user Mallory's passkey signs into now, if any. */
async function userMallorysPasskeyOpens(store: MemoryStore, mallory: PasskeyBrowser): Promise<string | undefined> {
  if (mallory.authenticator.passkeys.length === 0) return undefined
  await mallory.signOut()
  await mallory.signIn()
  const token = mallory.jar.get(SESSION_COOKIE)
  return token ? store.sessions.get(token)?.userId : undefined
}

const sessionUserOf = (store: MemoryStore, client: Client) => {
  const token = client.jar.get(SESSION_COOKIE)
  return token ? store.sessions.get(token)?.userId : undefined
}

describe('a passkey sign-up under the victim’s address does not become the victim’s account', () => {
  it('with an e-mail provider: the victim’s e-mail link never lands in a user Mallory’s passkey opens', async () => {
    const store = createMemoryStore()
    const outbox: Outbox = []
    const config = passkeyConfig(store, { providers: [Passkey(), mailbox(outbox)] })
    const mallory = await malloryTriesToSignUp(config, VICTIM)
    expect(store.authenticators.size, 'no passkey is registered under an address whose mail Mallory cannot read').toBe(0)

    const victim = new EmailClient(config)
    await victim.requestLink(VICTIM)
    await victim.confirm(lastLink(outbox))
    const victimUser = sessionUserOf(store, victim)
    expect(victimUser, 'the victim is signed in').toBeDefined()
    // Nobody's passkey but the victim's own may open the victim's account: it has none.
    expect([...store.authenticators.values()].filter((a) => a.userId === victimUser)).toEqual([])
    expect(await userMallorysPasskeyOpens(store, mallory)).not.toBe(victimUser)
  })

  it('an unverified passkey account from before an e-mail provider was configured is not adopted by the victim’s e-mail link', async () => {
    const store = createMemoryStore()
    const mallory = await malloryTriesToSignUp(passkeyConfig(store), VICTIM)
    const squat = (await MemoryAdapter(store).getUserByEmail(VICTIM))!
    expect(squat.emailVerified).toBeNull()

    const outbox: Outbox = []
    const later = passkeyConfig(store, { providers: [Passkey(), mailbox(outbox)] })
    const victim = new EmailClient(later)
    await victim.requestLink(VICTIM)
    const landed = await victim.confirm(lastLink(outbox))
    expect(landed.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(sessionUserOf(store, victim)).toBeUndefined()
    expect(later.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({
        type: 'AccountNotLinked',
        message: 'The account with this e-mail address signed up with a passkey and never verified the address',
      }),
    )
    // The address stays unverified: nothing vouches for Mallory's claim to it.
    expect((await MemoryAdapter(store).getUser(squat.id))!.emailVerified).toBeNull()
    expect(await userMallorysPasskeyOpens(store, mallory)).toBe(squat.id)
  })

  it('without an e-mail provider: credentials with allowDangerousEmailAccountLinking do not adopt it', async () => {
    const store = createMemoryStore()
    const credentials = Credentials({
      credentials: { username: {}, password: {} },
      allowDangerousEmailAccountLinking: true,
      authorize: ({ password }) => (password === 'right' ? { id: 'victim-in-app', email: VICTIM } : null),
    } as Parameters<typeof Credentials>[0])
    const config = passkeyConfig(store, { providers: [Passkey(), credentials] })
    const mallory = await malloryTriesToSignUp(config, VICTIM)
    const squat = (await MemoryAdapter(store).getUserByEmail(VICTIM))!

    const victim = new Client(config)
    const response = await victim.signIn({ username: VICTIM, password: 'right' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(sessionUserOf(store, victim)).toBeUndefined()
    expect([...store.accounts.values()].filter((a) => a.userId === squat.id).map((a) => a.type)).toEqual(['webauthn'])
    expect(await userMallorysPasskeyOpens(store, mallory)).toBe(squat.id)
  })
})

describe('OAuth with allowDangerousEmailAccountLinking, no e-mail provider', () => {
  let op: RunningOidcProvider
  beforeAll(async () => {
    op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
  })
  afterAll(() => op?.close())

  it('does not link the victim’s provider account to a passkey sign-up under their address', async () => {
    const store = createMemoryStore()
    const provider = appProvider(op.issuer, 'client_secret_basic', 'op', {
      checks: ['pkce', 'state'],
      allowDangerousEmailAccountLinking: true,
    })
    const config = passkeyConfig(store, { providers: [Passkey(), provider] as never })
    const victimAddress = OP_ACCOUNT.email.toLowerCase()
    const mallory = await malloryTriesToSignUp(config, victimAddress)
    const squat = (await MemoryAdapter(store).getUserByEmail(victimAddress))!

    const victim = new Client(config)
    const { callback } = await signInThroughProvider(victim, 'op')
    expect(callback.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=OAuthAccountNotLinked`)
    expect(sessionUserOf(store, victim)).toBeUndefined()
    expect(await MemoryAdapter(store).getUserByAccount({ provider: 'op', providerAccountId: OP_ACCOUNT.sub })).toBeNull()
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({
        type: 'OAuthAccountNotLinked',
        message: 'The account with this e-mail address signed up with a passkey and never verified the address',
      }),
    )
    expect(await userMallorysPasskeyOpens(store, mallory)).toBe(squat.id)
  })
})
