/**
 * Passkey refusals and failures down to what the mutation group of `core/flows/webauthn/flow.ts`
 * changes: which refusal is logged (the message an operator reads, Auth.js's where it has one), what
 * the browser gets, and that nothing is stored. The attacks themselves live in test/webauthn/.
 */
import { generateKeyPairSync, sign } from 'node:crypto'
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { ENVELOPE_MAX_AGE } from '../../core/engine/envelope.js'
import { memoryAuthStore } from '../../core/store/index.js'
import Passkey from '../../providers/passkey.js'
import { ORIGIN } from '../fixtures/http.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'
import { PasskeyBrowser, passkeyConfig, seedPasskeyUser, signInAs } from '../webauthn/helpers.js'

const ADA = { id: 'u-ada', email: 'ada@example.com', name: 'Ada' }

let store: MemoryStore
let credentialID: string

/** A passkey config whose adapter is the memory one with `changes` applied. */
function configWith(changes: Partial<Adapter> = {}) {
  return passkeyConfig(store, { adapter: { ...MemoryAdapter(store), ...changes } })
}

/** Every logged error as "Name: message (cause message)". */
function logged(config: ReturnType<typeof passkeyConfig>): string {
  return config.logger.error.mock.calls
    .map(([error]) => {
      const e = error as Error & { cause?: { err?: Error } }
      return `${e.name}: ${e.message}${e.cause?.err ? ` (${e.cause.err.message})` : ''}`
    })
    .join('\n')
}

beforeEach(async () => {
  store = createMemoryStore()
})

describe('a passkey sign-in whose stored rows are incomplete', () => {
  let browser: PasskeyBrowser
  let config: ReturnType<typeof passkeyConfig>

  beforeEach(async () => {
    config = configWith()
    browser = new PasskeyBrowser(config)
    credentialID = await seedPasskeyUser(store, browser.authenticator, ADA)
  })

  it('fails when the passkey has no account, naming the credential, and signs nobody in', async () => {
    store.accounts.clear()
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(store.sessions.size).toBe(0)
    expect(logged(config)).toContain(
      `WebAuthn account not found in database: ${JSON.stringify({ credentialID, providerAccountId: credentialID })}`,
    )
  })

  it("fails when the account's user is gone, naming the credential and the user", async () => {
    store.users.delete(ADA.id)
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(store.sessions.size).toBe(0)
    expect(logged(config)).toContain(
      `WebAuthn user not found in database: ${JSON.stringify({ credentialID, providerAccountId: credentialID, userID: ADA.id })}`,
    )
  })
})

describe('a counter the adapter cannot store', () => {
  it('fails the sign-in with an AdapterError naming the credential and both counters', async () => {
    const config = configWith({
      updateAuthenticatorCounter: async () => {
        throw new Error('disk full')
      },
    })
    const browser = new PasskeyBrowser(config)
    credentialID = await seedPasskeyUser(store, browser.authenticator, ADA, { counter: 4 })
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(store.sessions.size).toBe(0)
    const text = logged(config)
    expect(text).toContain(
      `Failed to update authenticator counter. This may cause future authentication attempts to fail. ${JSON.stringify({ credentialID, oldCounter: 4, newCounter: 5 })}`,
    )
    expect(text).toContain('disk full')
    expect(text).toMatch(/^AdapterError: /m)
  })
})

describe('a registration answer that is not one', () => {
  it('is refused as an invalid registration response, storing nothing', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: 'eve@example.com' })
    expect(body.action).toBe('register')
    const response = await browser.answer('register', JSON.stringify({ id: '', response: {} }))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
    expect(store.users.size).toBe(0)
    expect(store.authenticators.size).toBe(0)
    expect(logged(config)).toContain('WebAuthnVerificationError: Invalid WebAuthn Registration response')
  })

  it('is refused with the reason the verifier gives when it does not verify', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: 'eve@example.com' })
    const answer = browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON)
    const response = await browser.answer('register', { ...answer, type: 'not-public-key' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
    expect(store.authenticators.size).toBe(0)
    expect(logged(config)).toMatch(/^WebAuthnVerificationError: /m)
  })
})

describe('who a registration is for, when the answer comes', () => {
  it('refuses a passkey for a user who is no longer signed in, saying so', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(store, browser.authenticator, ADA)
    await signInAs(store, browser.jar, ADA.id)
    const { body } = await browser.options({ action: 'register' })
    store.sessions.clear()
    const response = await browser.answer('register', browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(store.authenticators.size).toBe(1)
    expect(logged(config)).toContain('AccountNotLinked: The passkey was requested by a user who is no longer signed in')
  })

  it('refuses a passkey requested by one user and answered while another is signed in', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(store, browser.authenticator, ADA)
    await MemoryAdapter(store).createUser({ id: 'u-bob', email: 'bob@example.com', emailVerified: null })
    await signInAs(store, browser.jar, ADA.id)
    const { body } = await browser.options({ action: 'register' })
    store.sessions.clear()
    await signInAs(store, browser.jar, 'u-bob')
    const response = await browser.answer('register', browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect([...store.authenticators.values()].map((a) => a.userId)).toEqual([ADA.id])
    expect(logged(config)).toContain('AccountNotLinked: The passkey was requested by a user who is no longer signed in')
  })

  it('refuses a sign-up answered after someone signed in in this browser, saying so', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    await MemoryAdapter(store).createUser({ id: 'u-bob', email: 'bob@example.com', emailVerified: null })
    const { body } = await browser.options({ email: 'eve@example.com' })
    expect(body.action).toBe('register')
    await signInAs(store, browser.jar, 'u-bob')
    const response = await browser.answer('register', browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(store.authenticators.size).toBe(0)
    expect(store.users.size).toBe(1)
    expect(logged(config)).toContain('AccountNotLinked: The passkey was requested for a new account, but a user is signed in')
  })

  it('refuses a sign-up whose address was taken meanwhile, saying so', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: ADA.email })
    await MemoryAdapter(store).createUser({ ...ADA, emailVerified: null })
    const response = await browser.answer('register', browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(logged(config)).toContain('AccountNotLinked: Another account already exists with the same e-mail address')
  })

  it("refuses a sign-in with someone else's passkey while signed in, saying so", async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(store, browser.authenticator, ADA)
    await MemoryAdapter(store).createUser({ id: 'u-bob', email: 'bob@example.com', emailVerified: null })
    await signInAs(store, browser.jar, 'u-bob')
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=AccountNotLinked`)
    expect(logged(config)).toContain('AccountNotLinked: The account is already associated with another user')
  })
})

describe('the relying party', () => {
  it("is the request's host by default: its hostname as the RP id, host and port as the name, its origin the only one", async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: 'eve@example.com' })
    const options = body.options as PublicKeyCredentialCreationOptionsJSON
    const url = new URL(ORIGIN)
    expect(options.rp).toEqual({ id: url.hostname, name: url.host })
    const elsewhere = new PasskeyBrowser(config, new SoftwareAuthenticator('https://elsewhere.test'))
    const { body: other } = await elsewhere.options({ email: 'eve@example.com' })
    const refused = await elsewhere.answer('register', elsewhere.authenticator.register(other.options as PublicKeyCredentialCreationOptionsJSON))
    expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
    const accepted = await browser.answer('register', browser.authenticator.register(options))
    expect(accepted.headers.get('location')).toBe(ORIGIN)
  })

  it('takes the first of listed ids and names', async () => {
    const relayingParty = { id: [new URL(ORIGIN).hostname, 'other.test'], name: ['Example', 'Other'], origin: ORIGIN }
    const config = passkeyConfig(store, { providers: [Passkey({ relayingParty } as never)] })
    const { body } = await new PasskeyBrowser(config).options({ email: 'eve@example.com' })
    expect((body.options as PublicKeyCredentialCreationOptionsJSON).rp).toEqual({ id: new URL(ORIGIN).hostname, name: 'Example' })
  })

  it("is the provider's getRelayingParty when it has one: its id, name and only origin", async () => {
    const rp = { id: new URL(ORIGIN).hostname, name: 'From the hook', origin: 'https://elsewhere.test' }
    const config = passkeyConfig(store, { providers: [Passkey({ getRelayingParty: () => rp } as never)] })
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: 'eve@example.com' })
    const options = body.options as PublicKeyCredentialCreationOptionsJSON
    expect(options.rp).toEqual({ id: rp.id, name: rp.name })
    // The answer comes from this page's origin, which the hook did not name: refused.
    const response = await browser.answer('register', browser.authenticator.register(options))
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
    expect(store.authenticators.size).toBe(0)
  })
})

describe('the challenge claim', () => {
  it('claims webauthn-challenge:<challenge> for the envelope lifetime, the key every instance and version shares', async () => {
    const backend = memoryAuthStore()
    const claims: string[] = []
    const config = passkeyConfig(store, {
      store: { ...backend, claim: (key: string, ttl: number) => (claims.push(`${key} ${ttl}`), backend.claim(key, ttl)) },
    })
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(store, browser.authenticator, ADA)
    const { body } = await browser.options({ action: 'authenticate' })
    const response = await browser.answer('authenticate', browser.authenticator.authenticate(body.options as never))
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(claims).toContain(`webauthn-challenge:${body.options.challenge} ${ENVELOPE_MAX_AGE}`)
  })
})

describe('a relying party whose origin is configured', () => {
  const ELSEWHERE = 'https://elsewhere.test'
  const configured = (origin: string | string[]) =>
    passkeyConfig(store, { providers: [Passkey({ relayingParty: { id: new URL(ORIGIN).hostname, name: 'Example', origin } } as never)] })

  it.each([['one origin', ELSEWHERE], ['a list of origins', [ELSEWHERE]]])(
    'accepts an answer from the configured origin (%s) only, not from the origin of the request',
    async (_name, origin) => {
      const config = configured(origin)
      const there = new PasskeyBrowser(config, new SoftwareAuthenticator(ELSEWHERE))
      expect((await there.register({ email: 'eve@example.com' })).headers.get('location')).toBe(ORIGIN)
      expect(store.authenticators.size).toBe(1)
      const here = new PasskeyBrowser(config)
      const refused = await here.register({ email: 'mallory@example.com' })
      expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
      expect(store.authenticators.size).toBe(1)
    },
  )
})

describe('a signature or an attestation that does not verify', () => {
  it("refuses an assertion not signed by the stored passkey's key, saying so, and signs nobody in", async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    credentialID = await seedPasskeyUser(store, browser.authenticator, ADA)
    // The stored public key is another passkey's: the browser's signature does not verify against it.
    const other = new SoftwareAuthenticator(ORIGIN)
    await seedPasskeyUser(store, other, { id: 'u-other', email: 'other@example.com' })
    const otherKey = [...store.authenticators.values()].find((a) => a.userId === 'u-other')!.credentialPublicKey
    store.authenticators.set(credentialID, { ...store.authenticators.get(credentialID)!, credentialPublicKey: otherKey })
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
    expect(store.sessions.size).toBe(0)
    expect(logged(config)).toContain('WebAuthn authentication response could not be verified')
  })

  it('refuses a registration whose self-attestation signature does not verify, saying so, storing nothing', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: 'eve@example.com' })
    const answer = browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON)
    // A packed self-attestation signed by some other key than the credential's.
    const attestation = isoCBOR.decodeFirst<Map<string, unknown>>(isoBase64URL.toBuffer(answer.response.attestationObject))
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    attestation.set('fmt', 'packed')
    attestation.set('attStmt', new Map<string, unknown>([['alg', -7], ['sig', new Uint8Array(sign('sha256', Buffer.from('other data'), privateKey))]]))
    const forged: RegistrationResponseJSON = {
      ...answer,
      response: { ...answer.response, attestationObject: isoBase64URL.fromBuffer(isoCBOR.encode(attestation as never)) },
    }
    const response = await browser.answer('register', forged)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
    expect(store.authenticators.size).toBe(0)
    expect(store.users.size).toBe(0)
    expect(logged(config)).toContain('WebAuthn registration response could not be verified')
  })

  it('logs the credential id of an assertion for a passkey nobody registered', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    credentialID = await seedPasskeyUser(store, browser.authenticator, ADA)
    store.authenticators.clear()
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=WebAuthnVerificationError`)
    expect(logged(config)).toContain(`WebAuthn authenticator not found in database: ${JSON.stringify({ credentialID })}`)
  })
})

describe("a new passkey's transports", () => {
  const registered = async (transports: string[] | undefined) => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    const { body } = await browser.options({ email: 'eve@example.com' })
    const answer = browser.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON)
    const { transports: _sent, ...response } = answer.response
    const response_ = await browser.answer('register', { ...answer, response: transports ? { ...response, transports } : response })
    expect(response_.headers.get('location')).toBe(ORIGIN)
    return [...store.authenticators.values()][0]!
  }

  it('are stored as the browser listed them, comma-separated', async () => {
    expect((await registered(['usb', 'nfc'])).transports).toBe('usb,nfc')
  })

  it('are left out when the browser lists none, or sends no list', async () => {
    expect((await registered([])).transports).toBeUndefined()
    store = createMemoryStore()
    expect((await registered(undefined)).transports).toBeUndefined()
  })
})

describe('who a passkey signs in, and what the sign-in events are told', () => {
  const withEvents = () => {
    const events = { signIn: vi.fn() }
    return { events, config: passkeyConfig(store, { events }) }
  }

  it("signs the signed-in user in again with their own passkey: not a new user, the passkey's account", async () => {
    const { events, config } = withEvents()
    const browser = new PasskeyBrowser(config)
    credentialID = await seedPasskeyUser(store, browser.authenticator, ADA)
    await signInAs(store, browser.jar, ADA.id)
    const response = await browser.signIn()
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect((await browser.session())?.user?.email).toBe(ADA.email)
    expect(events.signIn).toHaveBeenCalledOnce()
    const [{ user, account, isNewUser }] = events.signIn.mock.calls[0] as [{ user: { id: string }; account: Record<string, unknown>; isNewUser: boolean }]
    expect(user.id).toBe(ADA.id)
    expect(isNewUser).toBe(false)
    expect(account).toMatchObject({ provider: 'passkey', providerAccountId: credentialID, type: 'webauthn', userId: ADA.id })
  })

  it('tells a passkey added by a signed-in user that the user is not new', async () => {
    const { events, config } = withEvents()
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(store, browser.authenticator, ADA)
    await signInAs(store, browser.jar, ADA.id)
    const response = await browser.register({ action: 'register' })
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect([...store.authenticators.values()].map((a) => a.userId)).toEqual([ADA.id, ADA.id])
    expect(events.signIn).toHaveBeenCalledWith(expect.objectContaining({ isNewUser: false }))
  })

  it('logs a refused sign-in with the provider it was for', async () => {
    const config = configWith()
    const browser = new PasskeyBrowser(config)
    await seedPasskeyUser(store, browser.authenticator, ADA)
    await MemoryAdapter(store).createUser({ id: 'u-bob', email: 'bob@example.com', emailVerified: null })
    await signInAs(store, browser.jar, 'u-bob')
    await browser.signIn()
    const [refusal] = config.logger.error.mock.calls.map(([error]) => error as Error & { cause?: unknown })
    expect(refusal?.name).toBe('AccountNotLinked')
    expect(refusal?.cause).toEqual({ provider: 'passkey' })
  })

  it("asks the provider's getUserInfo, with the adapter and the provider, who a sign-up is for", async () => {
    const seen: string[] = []
    const getUserInfo = async ({ adapter, provider }: { adapter: Adapter; provider: { id: string } }, request: { query: Record<string, string> }) => {
      seen.push(provider.id)
      const email = `${request.query.handle}@example.com`
      const existing = await adapter.getUserByEmail!(email)
      return existing ? { user: existing, exists: true } : { user: { email, name: `Hook ${request.query.handle}` }, exists: false }
    }
    const config = passkeyConfig(store, { providers: [Passkey({ getUserInfo } as never)] })
    const browser = new PasskeyBrowser(config)
    const response = await browser.register({ handle: 'eve' })
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect([...store.users.values()]).toEqual([expect.objectContaining({ email: 'eve@example.com', name: 'Hook eve' })])
    expect(seen).toEqual(['passkey'])
  })
})
