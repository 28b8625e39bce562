/**
 * Passkey test helpers: a config with the passkey provider over the memory adapter, and a
 * "browser" that runs ceremonies against `Auth` with the software authenticator.
 *
 * @module
 */
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server'
import { expect } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { AuthConfig } from '../../core/types.js'
import Passkey from '../../providers/passkey.js'
import { Client, CookieJar, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'
import { SoftwareAuthenticator, type AnswerOverrides } from '../fixtures/software-authenticator.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

/** The challenge cookie over HTTPS (the test origin). */
export const CHALLENGE_COOKIE = '__Secure-authjs.challenge'
export const SESSION_COOKIE = '__Secure-authjs.session-token'

/** A passkey config over a memory store; database sessions (the adapter's default). */
export function passkeyConfig(
  store: MemoryStore = createMemoryStore(),
  overrides: Partial<AuthConfig> = {},
): AuthConfig & { logger: ReturnType<typeof spyLogger> } {
  return {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    adapter: MemoryAdapter(store),
    experimental: { enableWebAuthn: true },
    providers: [Passkey()],
    secondFactor: totp(),
    stepUp: stepUp(),
    ...overrides,
  } as AuthConfig & { logger: ReturnType<typeof spyLogger> }
}

/** What `GET /webauthn-options` answers. */
export type OptionsBody =
  | { action: 'register'; options: PublicKeyCredentialCreationOptionsJSON }
  | { action: 'authenticate'; options: PublicKeyCredentialRequestOptionsJSON }

/** A browser with a cookie jar and a software authenticator, on one config. */
export class PasskeyBrowser {
  readonly client: Client
  constructor(
    config: AuthConfig,
    readonly authenticator = new SoftwareAuthenticator(ORIGIN),
    readonly provider = 'passkey',
  ) {
    this.client = new Client(config)
  }

  get jar() {
    return this.client.jar
  }

  /** `GET /webauthn-options/:provider` with the query given. */
  async options(query: Record<string, string> = {}): Promise<{ response: Response; body: OptionsBody }> {
    const response = await this.client.send({ path: `/webauthn-options/${this.provider}`, query })
    return { response, body: (await response.clone().json()) as OptionsBody }
  }

  /** `POST /webauthn-options/:provider` with a CSRF token, as the built-in page asks. */
  async postOptions(fields: Record<string, string>): Promise<{ response: Response; body: Record<string, unknown> | null }> {
    const csrfToken = await this.client.csrfToken()
    const response = await this.client.send({ path: `/webauthn-options/${this.provider}`, body: { ...fields, csrfToken } })
    return { response, body: (await response.clone().json().catch(() => null)) as Record<string, unknown> | null }
  }

  /** Types the code a sign-up was sent (a CSRF-checked POST that resumes the sign-up). */
  submitCode(code: string): ReturnType<PasskeyBrowser['postOptions']> {
    return this.postOptions({ code })
  }

  /**
   * Signs up as the built-in page does while an e-mail provider verifies addresses: posts the
   * address, types the code `readCode` finds in the mailbox, registers a passkey.
   */
  async signUpWithCode(email: string, readCode: () => string | Promise<string>): Promise<Response> {
    const asked = await this.postOptions({ email })
    expect(asked.body).toEqual({ action: 'verify-email' })
    const { body } = await this.submitCode(await readCode())
    expect(body?.action).toBe('register')
    return this.answer('register', this.authenticator.register(body!.options as PublicKeyCredentialCreationOptionsJSON))
  }

  /** Posts an answer as the built-in form does. */
  answer(action: string, data: unknown, extra: Record<string, string> = {}): Promise<Response> {
    return this.client.send({
      path: `/callback/${this.provider}`,
      body: { action, data: typeof data === 'string' ? data : JSON.stringify(data), ...extra },
    })
  }

  /** Signs up (no session) or adds a passkey (signed in) for `email`. */
  async register(query: Record<string, string>, overrides: AnswerOverrides = {}): Promise<Response> {
    const { body } = await this.options(query)
    expect(body.action).toBe('register')
    return this.answer('register', this.authenticator.register(body.options as PublicKeyCredentialCreationOptionsJSON, overrides))
  }

  /** Signs in with a passkey (conditional UI asks with `action=authenticate` and nothing else). */
  async signIn(query: Record<string, string> = { action: 'authenticate' }, overrides: AnswerOverrides = {}): Promise<Response> {
    const { body } = await this.options(query)
    expect(body.action).toBe('authenticate')
    return this.answer(
      'authenticate',
      this.authenticator.authenticate(body.options as PublicKeyCredentialRequestOptionsJSON, overrides),
    )
  }

  async session(): Promise<{ user?: { email?: string; name?: string } } | null> {
    return (await this.client.session()).body as { user?: { email?: string } } | null
  }

  signOut(): Promise<Response> {
    return this.client.signOut()
  }
}

/** A stored user. */
export interface SeedUser {
  id: string
  email: string
  name?: string
}

/**
 * Stores `user` with a passkey of `authenticator` (as a completed registration would): the user,
 * the webauthn account, the authenticator. Returns the passkey's stored credential id (base64).
 */
export async function seedPasskeyUser(
  store: MemoryStore,
  authenticator: SoftwareAuthenticator,
  user: SeedUser,
  { provider = 'passkey', rpId = new URL(ORIGIN).hostname, counter = 0 } = {},
): Promise<string> {
  const adapter = MemoryAdapter(store)
  if (!store.users.has(user.id)) await adapter.createUser({ ...user, emailVerified: null })
  authenticator.register(
    { challenge: 'seed', rp: { id: rpId, name: rpId }, user: { id: 'c2VlZA', name: user.email, displayName: '' }, pubKeyCredParams: [] },
    { counter },
  )
  const passkey = authenticator.passkeys.at(-1)!
  const credentialID = Buffer.from(passkey.id, 'base64url').toString('base64')
  await adapter.linkAccount({ provider, providerAccountId: credentialID, type: 'webauthn', userId: user.id })
  await adapter.createAuthenticator({
    credentialID,
    providerAccountId: credentialID,
    userId: user.id,
    credentialPublicKey: Buffer.from(passkey.publicKey).toString('base64'),
    counter,
    credentialBackedUp: true,
    credentialDeviceType: 'multiDevice',
    transports: 'internal,hybrid',
  })
  return credentialID
}

/**
 * Signs `userId` in with a database session row, the way a completed passkey sign-in leaves the jar
 * and the store (its sign-in time and the passkey proven now, so a sensitive action need not ask).
 */
export async function signInAs(store: MemoryStore, jar: CookieJar, userId: string): Promise<void> {
  const sessionToken = crypto.randomUUID()
  const now = new Date()
  await MemoryAdapter(store).createSession({
    sessionToken,
    userId,
    expires: new Date(now.getTime() + 86_400_000),
    createdAt: now,
    fva: { hwk: Math.floor(now.getTime() / 1000) },
  })
  jar.cookies.set(SESSION_COOKIE, sessionToken)
}
