/**
 * The adapter contract: the behaviour of Auth.js's `runBasicTests` (reference §9) plus WebAuthn
 * methods, the identifier check of `useVerificationToken`, and single use under concurrency. Every
 * test creates its own records, so tests are independent and may run in any order.
 *
 * @module
 */
import { createHash, randomInt, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type {
  Adapter,
  AdapterAccount,
  AdapterAuthenticator,
  AdapterSession,
  AdapterUser,
  VerificationToken,
} from '../../core/adapters.js'

/** Direct readers of the store, bypassing the adapter; `null` when absent. */
export interface ContractDb {
  user(id: string): Promise<AdapterUser | null>
  account(key: { provider: string; providerAccountId: string }): Promise<AdapterAccount | null>
  session(sessionToken: string): Promise<AdapterSession | null>
  verificationToken(key: { identifier: string; token: string }): Promise<VerificationToken | null>
  authenticator(credentialID: string): Promise<AdapterAuthenticator | null>
}

/** What a store under test provides. */
export interface ContractSubject {
  adapter: Required<Adapter>
  db: ContractDb
}

/** Dates with whole milliseconds, as every store keeps at least that precision. */
const inDays = (days: number) => new Date(Math.floor(Date.now() / 1000) * 1000 + days * 86_400_000)

const hashToken = (token: string) => createHash('sha256').update(`${token}anything`).digest('hex')

function userFixture(): Omit<AdapterUser, 'id'> & { id?: string } {
  const tag = randomUUID()
  return {
    email: `fill-${tag}@murray.test`,
    image: 'https://img.test/fill.png',
    name: 'Fill Murray',
    emailVerified: inDays(0),
  }
}

function accountFixture(userId: string): AdapterAccount {
  return {
    userId,
    provider: 'github',
    providerAccountId: randomUUID(),
    type: 'oauth',
    access_token: randomUUID(),
    expires_at: Math.floor(Date.now() / 1000) + 2_592_000,
    id_token: randomUUID(),
    refresh_token: randomUUID(),
    token_type: 'bearer',
    scope: 'user',
    session_state: randomUUID(),
  }
}

/** Runs the contract against the store `subject()` returns (once per file). */
export function adapterContract(name: string, subject: () => ContractSubject): void {
  async function newUser(): Promise<AdapterUser> {
    return subject().adapter.createUser(userFixture() as AdapterUser)
  }

  describe(`adapter contract: ${name}`, () => {
    it('has every method of the Auth.js adapter interface', () => {
      const methods = [
        'createUser', 'getUser', 'getUserByEmail', 'getUserByAccount', 'updateUser', 'deleteUser',
        'linkAccount', 'unlinkAccount', 'createSession', 'getSessionAndUser', 'updateSession',
        'deleteSession', 'createVerificationToken', 'useVerificationToken', 'getAccount',
        'getAuthenticator', 'createAuthenticator', 'listAuthenticatorsByUserId',
        'updateAuthenticatorCounter',
      ]
      for (const method of methods) expect(typeof subject().adapter[method as keyof Adapter], method).toBe('function')
    })

    it('creates a user, storing exactly what it was given plus an id', async () => {
      const { adapter, db } = subject()
      const fixture = userFixture()
      const created = await adapter.createUser(fixture as AdapterUser)
      expect(created.id).toEqual(expect.any(String))
      expect(await db.user(created.id)).toEqual({ ...fixture, id: created.id })
      expect(created).toEqual({ ...fixture, id: created.id })
    })

    it('keeps the id the core passes to createUser', async () => {
      const { adapter } = subject()
      const id = randomUUID()
      const created = await adapter.createUser({ ...userFixture(), id } as AdapterUser)
      expect(created.id).toBe(id)
      expect(await adapter.getUser(id)).toEqual(created)
    })

    it('finds a user by id and by email, and answers null for unknown ones', async () => {
      const { adapter } = subject()
      const user = await newUser()
      expect(await adapter.getUser(user.id)).toEqual(user)
      expect(await adapter.getUser(randomUUID())).toBeNull()
      expect(await adapter.getUserByEmail(user.email)).toEqual(user)
      expect(await adapter.getUserByEmail('non-existent@email.test')).toBeNull()
    })

    it('updates only the given fields of a user', async () => {
      const { adapter, db } = subject()
      const user = await newUser()
      const returned = await adapter.updateUser({ id: user.id, name: 'Updated Name' })
      expect(returned).toEqual({ ...user, name: 'Updated Name' })
      expect(await db.user(user.id)).toEqual({ ...user, name: 'Updated Name' })
    })

    it('creates a session and returns it with its user, exactly as the store holds it (its id included)', async () => {
      const { adapter, db } = subject()
      const user = await newUser()
      const session = { sessionToken: randomUUID(), userId: user.id, expires: inDays(7) }
      const created = await adapter.createSession(session)
      // As Auth.js's runBasicTests: the stored row is the session plus whatever id the store gives it.
      const stored = await db.session(session.sessionToken)
      expect(stored).toEqual({ ...session, id: (stored as { id?: unknown } | null)?.id })
      expect(created).toEqual(stored)
      expect(await adapter.getSessionAndUser(session.sessionToken)).toEqual({ session: stored, user })
      expect(await adapter.getSessionAndUser('invalid-token')).toBeNull()
    })

    it("updates a session's expiry and answers null for an unknown token", async () => {
      const { adapter, db } = subject()
      const user = await newUser()
      const session = await adapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: inDays(7) })
      const expires = inDays(30)
      await adapter.updateSession({ sessionToken: session.sessionToken, expires })
      expect((await db.session(session.sessionToken))?.expires.valueOf()).toBe(expires.valueOf())
      expect(await adapter.updateSession({ sessionToken: 'unknown', expires })).toBeNull()
    })

    it('deletes a session', async () => {
      const { adapter, db } = subject()
      const user = await newUser()
      const session = await adapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: inDays(7) })
      await adapter.deleteSession(session.sessionToken)
      expect(await db.session(session.sessionToken)).toBeNull()
      expect(await adapter.getSessionAndUser(session.sessionToken)).toBeNull()
    })

    it("lists exactly the asked user's sessions: never another user's, none for an unknown user (authchart's listSessions)", async () => {
      const { adapter } = subject()
      const alice = await newUser()
      const bob = await newUser()
      const sessionOf = (userId: string) => adapter.createSession({ sessionToken: randomUUID(), userId, expires: inDays(7) })
      const alices = [await sessionOf(alice.id), await sessionOf(alice.id)]
      const bobs = [await sessionOf(bob.id)]
      const tokens = (list: AdapterSession[]) => list.map((s) => s.sessionToken).sort()
      const listedForAlice = await adapter.listSessions(alice.id)
      expect(tokens(listedForAlice)).toEqual(tokens(alices))
      expect(listedForAlice.every((s) => s.userId === alice.id)).toBe(true)
      expect(tokens(await adapter.listSessions(bob.id))).toEqual(tokens(bobs))
      expect(await adapter.listSessions(randomUUID())).toEqual([])
      // Another user's rows stay where they were, whatever was listed.
      await adapter.deleteSession(alices[0]!.sessionToken)
      expect(tokens(await adapter.listSessions(bob.id))).toEqual(tokens(bobs))
    })

    it('links an account, finds its user through it, and unlinks it', async () => {
      const { adapter, db } = subject()
      const user = await newUser()
      const account = accountFixture(user.id)
      await adapter.linkAccount(account)
      const key = { provider: account.provider, providerAccountId: account.providerAccountId }
      const stored = await db.account(key)
      expect(stored).toEqual({ ...account, id: stored?.id })
      expect(await adapter.getUserByAccount(key)).toEqual(user)
      expect(await adapter.getUserByAccount({ provider: 'invalid', providerAccountId: 'invalid' })).toBeNull()
      expect(await adapter.getAccount(account.providerAccountId, account.provider)).toMatchObject(account)
      await adapter.unlinkAccount(key)
      expect(await db.account(key)).toBeNull()
    })

    it('creates a user with its account in one step, as createUser and linkAccount would (authchart\'s optional method)', async () => {
      const { adapter, db } = subject()
      const fixture = { ...userFixture(), id: randomUUID() }
      const account = accountFixture('')
      const { user, account: linked } = await adapter.createUserAndAccount(fixture as AdapterUser, account)
      expect(user).toEqual(fixture)
      expect(await db.user(fixture.id)).toEqual(fixture)
      const key = { provider: account.provider, providerAccountId: account.providerAccountId }
      expect(linked).toMatchObject({ ...account, userId: fixture.id })
      expect(await db.account(key)).toMatchObject({ ...account, userId: fixture.id })
      expect(await adapter.getUserByAccount(key)).toEqual(user)
    })

    it('writes neither the user nor the account when the account cannot be linked', async () => {
      const { adapter, db } = subject()
      const taken = accountFixture((await newUser()).id)
      await adapter.linkAccount(taken)
      const fixture = { ...userFixture(), id: randomUUID() }
      await expect(adapter.createUserAndAccount(fixture as AdapterUser, { ...taken, userId: '' })).rejects.toThrow()
      expect(await db.user(fixture.id)).toBeNull()
      expect(await adapter.getUserByEmail(fixture.email)).toBeNull()
    })

    it("writes a session with its lifecycle details and amr together (authchart's optional fields)", async () => {
      const { adapter } = subject()
      const user = await newUser()
      const sessionToken = randomUUID()
      const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000)
      const created = await adapter.createSession({ sessionToken, userId: user.id, expires: inDays(7), amr: ['pwd', 'otp'], createdAt, userAgent: 'Browser/1' })
      expect(created).toMatchObject({ sessionToken, userId: user.id, amr: ['pwd', 'otp'], createdAt, userAgent: 'Browser/1' })
      expect((await adapter.getSessionAndUser(sessionToken))?.session).toMatchObject({ amr: ['pwd', 'otp'], createdAt, userAgent: 'Browser/1' })
    })

    it("updates an account's tokens in place and lists a user's accounts (authchart's optional methods)", async () => {
      const { adapter } = subject()
      const user = await newUser()
      const other = await newUser()
      const first = accountFixture(user.id)
      const second = { ...accountFixture(user.id), provider: 'second-provider' }
      await adapter.linkAccount(first)
      await adapter.linkAccount(second)
      await adapter.linkAccount(accountFixture(other.id))
      const listed = await adapter.listAccounts!(user.id)
      expect(listed.map((a) => a.provider).sort()).toEqual([first.provider, second.provider].sort())
      expect(await adapter.listAccounts!('nobody')).toEqual([])
      const updated = await adapter.updateAccount!({
        provider: first.provider,
        providerAccountId: first.providerAccountId,
        access_token: 'fresh-access',
        refresh_token: 'fresh-refresh',
        expires_at: 4_000_000_000,
      })
      expect(updated).toMatchObject({ ...first, access_token: 'fresh-access', refresh_token: 'fresh-refresh', expires_at: 4_000_000_000 })
      expect(await adapter.getAccount(first.providerAccountId, first.provider)).toMatchObject({ access_token: 'fresh-access', userId: user.id })
      expect(await adapter.updateAccount!({ provider: 'none', providerAccountId: 'none', access_token: 'x' })).toBeNull()
    })

    it('deletes a user together with its sessions, accounts and authenticators', async () => {
      const { adapter, db } = subject()
      const user = await newUser()
      const session = await adapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: inDays(7) })
      const account = accountFixture(user.id)
      await adapter.linkAccount(account)
      const credentialID = randomUUID()
      await adapter.createAuthenticator(authenticatorFixture(user.id, credentialID))
      await adapter.deleteUser(user.id)
      expect(await db.user(user.id)).toBeNull()
      expect(await db.session(session.sessionToken)).toBeNull()
      expect(await db.account({ provider: account.provider, providerAccountId: account.providerAccountId })).toBeNull()
      expect(await db.authenticator(credentialID)).toBeNull()
    })

    it('stores exactly the verification token it is given', async () => {
      const { adapter, db } = subject()
      const token = { identifier: `${randomUUID()}@example.test`, token: hashToken(randomUUID()), expires: inDays(1) }
      await adapter.createVerificationToken(token)
      expect(await db.verificationToken(token)).toEqual(token)
    })

    it('hands a verification token out once, then never again', async () => {
      const { adapter, db } = subject()
      const token = { identifier: `${randomUUID()}@example.test`, token: hashToken(randomUUID()), expires: inDays(1) }
      await adapter.createVerificationToken(token)
      expect(await adapter.useVerificationToken(token)).toEqual(token)
      expect(await adapter.useVerificationToken(token)).toBeNull()
      expect(await db.verificationToken(token)).toBeNull()
    })

    it('refuses a verification token presented for another identifier, and keeps it', async () => {
      const { adapter } = subject()
      const token = { identifier: `${randomUUID()}@example.test`, token: hashToken(randomUUID()), expires: inDays(1) }
      await adapter.createVerificationToken(token)
      expect(await adapter.useVerificationToken({ identifier: 'mallory@example.test', token: token.token })).toBeNull()
      expect(await adapter.useVerificationToken(token)).toEqual(token)
    })

    it('gives a verification token to exactly one of ten concurrent uses', async () => {
      const { adapter } = subject()
      const token = { identifier: `${randomUUID()}@example.test`, token: hashToken(randomUUID()), expires: inDays(1) }
      await adapter.createVerificationToken(token)
      const results = await Promise.all(Array.from({ length: 10 }, () => adapter.useVerificationToken(token)))
      expect(results.filter((r) => r !== null)).toHaveLength(1)
    })

    it('stores, finds, lists and counts WebAuthn authenticators', async () => {
      const { adapter, db } = subject()
      const user = await newUser()
      const credentialID = randomUUID()
      const authenticator = authenticatorFixture(user.id, credentialID)
      expect(await adapter.createAuthenticator(authenticator)).toEqual(authenticator)
      expect(await db.authenticator(credentialID)).toEqual(authenticator)
      expect(await adapter.getAuthenticator(credentialID)).toEqual(authenticator)
      expect(await adapter.getAuthenticator(randomUUID())).toBeNull()
      expect(await adapter.listAuthenticatorsByUserId(user.id)).toEqual([authenticator])
      expect(await adapter.listAuthenticatorsByUserId(randomUUID())).toEqual([])
      expect(await adapter.updateAuthenticatorCounter(credentialID, 42)).toEqual({ ...authenticator, counter: 42 })
      expect((await db.authenticator(credentialID))?.counter).toBe(42)
    })

    it('rejects a counter update for an unknown authenticator', async () => {
      await expect(subject().adapter.updateAuthenticatorCounter(randomUUID(), 1)).rejects.toThrow()
    })

    it('keeps how a multi-factor session was signed in to (amr) and reads it back with the session', async () => {
      const { adapter } = subject()
      const user = await newUser()
      const sessionToken = randomUUID()
      const created = await adapter.createSession({ sessionToken, userId: user.id, expires: inDays(7), amr: ['pwd', 'otp'] })
      expect(created.amr).toEqual(['pwd', 'otp'])
      expect((await adapter.getSessionAndUser(sessionToken))?.session.amr).toEqual(['pwd', 'otp'])
      await adapter.deleteSession(sessionToken)
      expect(await adapter.getSessionAndUser(sessionToken)).toBeNull()
    })

    it('keeps the provider session a session was signed in with, and deletes sessions by it (logout by the provider)', async () => {
      const { adapter } = subject()
      const user = await newUser()
      const provider = `op-${randomUUID()}`
      const session = async (providerSession?: { provider: string; sub: string; sid?: string }) => {
        const sessionToken = randomUUID()
        await adapter.createSession({ sessionToken, userId: user.id, expires: inDays(7), ...(providerSession ? { providerSession } : {}) })
        return sessionToken
      }
      const [first, second, otherSid, noSid, otherSub, otherProvider, plain] = await Promise.all([
        session({ provider, sub: 'alice', sid: 'sid-1' }),
        session({ provider, sub: 'alice', sid: 'sid-1' }),
        session({ provider, sub: 'alice', sid: 'sid-2' }),
        session({ provider, sub: 'alice' }),
        session({ provider, sub: 'bob', sid: 'sid-3' }),
        session({ provider: `${provider}-2`, sub: 'alice', sid: 'sid-1' }),
        session(),
      ])
      const live = async () =>
        (await Promise.all([first, second, otherSid, noSid, otherSub, otherProvider, plain].map((t) => adapter.getSessionAndUser(t))))
          .map((found, i) => (found ? i : null))
          .filter((i) => i !== null)
      expect((await adapter.getSessionAndUser(first))?.session.providerSession).toEqual({ provider, sub: 'alice', sid: 'sid-1' })
      expect((await adapter.getSessionAndUser(noSid))?.session.providerSession).toEqual({ provider, sub: 'alice' })
      expect((await adapter.getSessionAndUser(plain))?.session.providerSession).toBeUndefined()

      expect(await adapter.deleteProviderSessions({ provider, sid: 'sid-1' })).toBe(2)
      expect(await live()).toEqual([2, 3, 4, 5, 6])
      expect(await adapter.deleteProviderSessions({ provider, sid: 'sid-1' }), 'nothing left to delete').toBe(0)
      expect(await adapter.deleteProviderSessions({ provider, sub: 'alice' })).toBe(2)
      expect(await live(), "bob's, the other provider's and the plain session stay").toEqual([4, 5, 6])
    })

    it('records completed sign-in steps per user and version, once, and deletes them with their user', async () => {
      const { adapter } = subject()
      const user = await newUser()
      const other = await newUser()
      expect(await adapter.getCompletedSteps!(user.id)).toEqual([])
      await adapter.recordCompletedStep!(user.id, 'terms', '2026-01')
      await adapter.recordCompletedStep!(user.id, 'terms', '2026-01')
      await adapter.recordCompletedStep!(user.id, 'terms', '2026-06')
      await adapter.recordCompletedStep!(other.id, 'welcome', '1')
      expect(await adapter.getCompletedSteps!(user.id)).toEqual([
        { stepId: 'terms', version: '2026-01' },
        { stepId: 'terms', version: '2026-06' },
      ])
      // A user the application keeps itself (credentials with JWT sessions) has no row: recorded all the same.
      const unstored = randomUUID()
      await adapter.recordCompletedStep!(unstored, 'welcome', '1')
      expect(await adapter.getCompletedSteps!(unstored)).toEqual([{ stepId: 'welcome', version: '1' }])
      await adapter.deleteUser(user.id)
      expect(await adapter.getCompletedSteps!(user.id)).toEqual([])
      expect(await adapter.getCompletedSteps!(other.id)).toEqual([{ stepId: 'welcome', version: '1' }])
    })

    it('stores, lists, updates and deletes second factors, and deletes them with their user', async () => {
      const { adapter } = subject()
      const user = await newUser()
      const totp = { id: randomUUID(), userId: user.id, type: 'totp' as const, secret: 'sealed-secret', createdAt: new Date('2026-01-01T00:00:00Z') }
      const codes = { ...totp, id: randomUUID(), type: 'backup-codes' as const, secret: 'h1 h2 h3', createdAt: new Date('2026-01-02T00:00:00Z') }
      expect(await adapter.createSecondFactor!(totp)).toEqual(totp)
      await adapter.createSecondFactor!(codes)
      expect(await adapter.listSecondFactors!(user.id)).toEqual([totp, codes])
      expect(await adapter.listSecondFactors!(randomUUID())).toEqual([])
      expect(await adapter.updateSecondFactor!({ id: codes.id, secret: 'h1 h3' })).toEqual({ ...codes, secret: 'h1 h3' })
      await adapter.deleteSecondFactor!(totp.id)
      expect(await adapter.listSecondFactors!(user.id)).toEqual([{ ...codes, secret: 'h1 h3' }])
      await adapter.deleteUser(user.id)
      expect(await adapter.listSecondFactors!(user.id)).toEqual([])
    })

    it('spends a backup code in one conditional update: once, and two different codes at once both', async () => {
      const { adapter } = subject()
      const user = await newUser()
      const codes = { id: randomUUID(), userId: user.id, type: 'backup-codes' as const, secret: 'h1 h2 h3 h4', createdAt: new Date('2026-01-02T00:00:00Z') }
      const totp = { ...codes, id: randomUUID(), type: 'totp' as const, secret: 'h1' }
      await adapter.createSecondFactor!(codes)
      await adapter.createSecondFactor!(totp)
      // The same code ten times at once: removed by exactly one call.
      const same = await Promise.all(Array.from({ length: 10 }, () => adapter.spendBackupCode!({ id: codes.id, hash: 'h2' })))
      expect(same.filter(Boolean)).toHaveLength(1)
      // Two different codes at once: both removed, neither write lost.
      expect(await Promise.all([adapter.spendBackupCode!({ id: codes.id, hash: 'h1' }), adapter.spendBackupCode!({ id: codes.id, hash: 'h4' })])).toEqual([true, true])
      expect(await adapter.spendBackupCode!({ id: codes.id, hash: 'h1' })).toBe(false)
      expect(await adapter.spendBackupCode!({ id: codes.id, hash: 'h' })).toBe(false)
      expect(await adapter.spendBackupCode!({ id: randomUUID(), hash: 'h3' })).toBe(false)
      // A TOTP factor is not a list of codes.
      expect(await adapter.spendBackupCode!({ id: totp.id, hash: 'h1' })).toBe(false)
      const factors = await adapter.listSecondFactors!(user.id)
      expect(factors.find((f) => f.id === codes.id)?.secret).toBe('h3')
      expect(factors.find((f) => f.id === totp.id)?.secret).toBe('h1')
      await adapter.deleteUser(user.id)
    })

    it('refuses a second factor whose id exists', async () => {
      const { adapter } = subject()
      const user = await newUser()
      const factor = { id: randomUUID(), userId: user.id, type: 'totp' as const, secret: 'first', createdAt: new Date('2026-01-01T00:00:00Z') }
      await adapter.createSecondFactor!(factor)
      await expect(async () => adapter.createSecondFactor!({ ...factor, secret: 'second' })).rejects.toThrow()
      expect((await adapter.listSecondFactors!(user.id)).map((f) => f.secret)).toEqual(['first'])
      await adapter.deleteUser(user.id)
    })

    // Auth.js's runBasicTests WebAuthn cases (packages/utils/adapter.ts, testWebAuthnMethods),
    // each with its own records. Its listAuthenticatorsByUserId case compares in one fixed order;
    // the interface promises none, so the lists are compared by credential id.
    describe("Auth.js's WebAuthn cases", () => {
      async function passkeyUser(tag: string) {
        const { adapter } = subject()
        const user = await adapter.createUser({
          id: randomUUID(),
          email: `${tag}-${randomUUID()}@example.com`,
          emailVerified: null,
        })
        const credentialID = randomUUID()
        await adapter.linkAccount({ provider: 'webauthn', providerAccountId: credentialID, type: 'webauthn', userId: user.id })
        const authenticator = {
          credentialID,
          providerAccountId: credentialID,
          userId: user.id,
          counter: randomInt(100),
          credentialBackedUp: true,
          credentialDeviceType: 'platform',
          credentialPublicKey: randomUUID(),
          transports: 'usb,ble,nfc',
        }
        return { user, credentialID, authenticator }
      }

      it('getAccount finds an account by providerAccountId and provider, and nothing for either wrong', async () => {
        const { adapter, db } = subject()
        const providerAccountId = randomUUID()
        const provider = 'auth0'
        const user = await adapter.createUser({ id: randomUUID(), email: `getAccount-${randomUUID()}@example.com`, emailVerified: null })
        await adapter.linkAccount({ provider, providerAccountId, type: 'oauth', userId: user.id })
        expect(await adapter.getAccount('invalid-provider-account-id', 'invalid-provider')).toBeNull()
        expect(await adapter.getAccount(providerAccountId, 'invalid-provider')).toBeNull()
        expect(await adapter.getAccount('invalid-provider-account-id', provider)).toBeNull()
        const account = await adapter.getAccount(providerAccountId, provider)
        expect(account).not.toBeNull()
        expect(await db.account({ provider, providerAccountId })).toMatchObject(account!)
      })

      it('createAuthenticator returns and stores what it was given', async () => {
        const { adapter, db } = subject()
        const { credentialID, authenticator } = await passkeyUser('createAuthenticator')
        const created = await adapter.createAuthenticator(authenticator)
        expect(created).toMatchObject(authenticator)
        expect(await db.authenticator(credentialID)).toMatchObject(created)
      })

      it('getAuthenticator finds an authenticator by credential id, and null for an unknown one', async () => {
        const { adapter, db } = subject()
        const { credentialID, authenticator } = await passkeyUser('getAuthenticator')
        await adapter.createAuthenticator(authenticator)
        expect(await adapter.getAuthenticator('invalid-credential-id')).toBeNull()
        const found = await adapter.getAuthenticator(credentialID)
        expect(found).not.toBeNull()
        expect(await db.authenticator(credentialID)).toMatchObject(found!)
      })

      it("listAuthenticatorsByUserId lists exactly each user's authenticators", async () => {
        const { adapter } = subject()
        const first = await passkeyUser('listAuthenticatorsByUserId1')
        const second = await passkeyUser('listAuthenticatorsByUserId2')
        const firstSecondId = randomUUID()
        await adapter.linkAccount({ provider: 'webauthn', providerAccountId: firstSecondId, type: 'webauthn', userId: first.user.id })
        const a1 = await adapter.createAuthenticator(first.authenticator)
        const a2 = await adapter.createAuthenticator({
          ...first.authenticator,
          credentialID: firstSecondId,
          providerAccountId: firstSecondId,
          transports: 'usb,nfc',
        })
        const a3 = await adapter.createAuthenticator({ ...second.authenticator, transports: 'usb,ble' })
        const byId = (list: AdapterAuthenticator[]) => [...list].sort((x, y) => x.credentialID.localeCompare(y.credentialID))
        expect(await adapter.listAuthenticatorsByUserId('invalid-user-id')).toEqual([])
        expect(byId(await adapter.listAuthenticatorsByUserId(first.user.id))).toMatchObject(byId([a1, a2]))
        expect(await adapter.listAuthenticatorsByUserId(second.user.id)).toMatchObject([a3])
      })

      it('updateAuthenticatorCounter stores the new counter, and rejects an unknown credential', async () => {
        const { adapter } = subject()
        const { credentialID, authenticator } = await passkeyUser('updateAuthenticatorCounter')
        const created = await adapter.createAuthenticator(authenticator)
        await expect(adapter.updateAuthenticatorCounter('invalid-credential-id', randomInt(100))).rejects.toThrow()
        const counter = created.counter + randomInt(100)
        const updated = await adapter.updateAuthenticatorCounter(credentialID, counter)
        expect(updated.counter).toBe(counter)
      })
    })
  })
}

function authenticatorFixture(userId: string, credentialID: string): AdapterAuthenticator {
  return {
    credentialID,
    userId,
    providerAccountId: randomUUID(),
    credentialPublicKey: Buffer.from(randomUUID()).toString('base64'),
    counter: 1,
    credentialDeviceType: 'singleDevice',
    credentialBackedUp: false,
    transports: 'internal,hybrid',
  }
}
