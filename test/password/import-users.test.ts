import { hashPassword as betterAuthHashPassword } from 'better-auth/crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { MemoryAdapter } from '../../adapters/memory.js'
import { passwordHasher } from '../../core/password/hashing.js'
import { importUsersCommand } from '../../core/password/import-users-command.js'
import { detectFormat, ImportFormatError, importUsers, parseCsv, type ImportAdapter } from '../../core/password/import-users.js'

const BCRYPT = { password: 'rasmuslerdorf', hash: '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a' }
const FIREBASE = {
  signerKey: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
  saltSeparator: 'Bw==',
  rounds: 8,
  memoryCost: 14,
}
// The account row of github.com/firebase/scrypt's README, as `firebase auth:export users.csv` writes it.
const FIREBASE_CSV =
  'kYi4EvWQlQTKSfnJ3dRSP6IH3ed2,user1@test.com,false,lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==,42xEC+ixf3L2lw==,Test User 1,,,,,,,,,,,,,,,,,,,1508893925000,1508893925000,,\n' +
  'u2,"second@test.com",true,,,"Second, Jr.",,g-123,second@gmail.com,,,,,,,,,,,,,,,,1508893925000,1508893925000,,\n'

const hasher = passwordHasher({ imported: { firebase: FIREBASE } })

/** The memory adapter, with a password map where this branch's copy has none. */
function adapter(): ImportAdapter & ReturnType<typeof MemoryAdapter> {
  const base = MemoryAdapter() as ReturnType<typeof MemoryAdapter> & ImportAdapter
  if (typeof base.setUserPassword === 'function') return base
  const passwords = new Map<string, string>()
  return Object.assign(base, {
    getUserPassword: async (userId: string) => passwords.get(userId) ?? null,
    setUserPassword: async (userId: string, hash: string | null) => void (hash === null ? passwords.delete(userId) : passwords.set(userId, hash)),
  })
}

let betterAuthExport: string
let betterAuthHash: string
beforeAll(async () => {
  betterAuthHash = await betterAuthHashPassword('alice’s password')
  betterAuthExport = JSON.stringify({
    user: [
      { id: 'ba-1', name: 'Alice', email: 'Alice@Example.com', emailVerified: true, image: null, createdAt: '2025-01-01T00:00:00.000Z' },
      { id: 'ba-2', name: 'Bob', email: 'bob@example.com', emailVerified: false, image: 'https://img/bob.png' },
    ],
    account: [
      { id: 'a1', accountId: 'ba-1', providerId: 'credential', userId: 'ba-1', password: betterAuthHash },
      { id: 'a2', accountId: '4242', providerId: 'github', userId: 'ba-2', accessToken: 'gho_x', scope: 'read:user', accessTokenExpiresAt: '2030-01-01T00:00:00.000Z' },
    ],
  })
})

async function passwordOf(store: ImportAdapter, email: string): Promise<string | null> {
  const user = await store.getUserByEmail!(email)
  return user ? ((await store.getUserPassword!(user.id)) ?? null) : null
}

describe('better-auth export', () => {
  it('creates the users, stores the credential hash as it is and links the OAuth account', async () => {
    const store = adapter()
    const report = await importUsers({ adapter: store, text: betterAuthExport })
    expect(report.format).toBe('better-auth')
    expect(report.counts).toEqual({ read: 2, created: 2, updated: 0, skipped: 0, failed: 0, passwordsSet: 1, accountsLinked: 1 })
    expect(report.hashFormats).toEqual({ 'better-auth-scrypt': 1 })
    const alice = await store.getUserByEmail('alice@example.com')
    expect(alice).toMatchObject({ name: 'Alice', email: 'alice@example.com' })
    expect(alice!.emailVerified).toBeInstanceOf(Date)
    expect(await passwordOf(store, 'alice@example.com')).toBe(betterAuthHash)
    expect(await hasher.verify(betterAuthHash, 'alice’s password')).toEqual({ valid: true, needsRehash: true })
    const bob = await store.getUserByAccount({ provider: 'github', providerAccountId: '4242' })
    expect(bob).toMatchObject({ email: 'bob@example.com', emailVerified: null, image: 'https://img/bob.png' })
    expect(await passwordOf(store, 'bob@example.com')).toBeNull()
  })

  it('assigns new ids unless asked to keep the source’s', async () => {
    const fresh = adapter()
    await importUsers({ adapter: fresh, text: betterAuthExport })
    expect((await fresh.getUserByEmail('alice@example.com'))!.id).not.toBe('ba-1')
    const kept = adapter()
    await importUsers({ adapter: kept, text: betterAuthExport, keepIds: true })
    expect((await kept.getUserByEmail('alice@example.com'))!.id).toBe('ba-1')
  })
})

describe('Auth0 bulk export', () => {
  const ndjson = [
    JSON.stringify({ _id: { $oid: '60a1' }, email: 'carol@example.com', email_verified: true, passwordHash: BCRYPT.hash, connection: 'Username-Password-Authentication' }),
    '{not json',
    JSON.stringify({ _id: { $oid: '60a2' }, email: 'not an address', passwordHash: BCRYPT.hash }),
    JSON.stringify({ _id: { $oid: '60a3' }, email: 'dave@example.com', passwordHash: '$md5$legacy' }),
    JSON.stringify({ _id: { $oid: '60a4' }, email: 'CAROL@example.com', passwordHash: BCRYPT.hash }),
    '',
  ].join('\n')

  it('imports bcrypt hashes that then verify, and reports each bad record without stopping', async () => {
    const store = adapter()
    const report = await importUsers({ adapter: store, text: ndjson })
    expect(report.format).toBe('auth0')
    expect(report.counts).toMatchObject({ read: 5, created: 1, failed: 4, passwordsSet: 1 })
    expect(report.outcomes.filter((o) => o.outcome === 'failed').map((o) => [o.origin, o.detail])).toEqual([
      ['line 2', 'no valid e-mail address'],
      ['line 3', 'no valid e-mail address'],
      ['line 4', 'the password hash is in no format this library verifies'],
      ['line 5', 'the address appears twice in the export'],
    ])
    const stored = await passwordOf(store, 'carol@example.com')
    expect(await hasher.verify(stored!, BCRYPT.password)).toEqual({ valid: true, needsRehash: true })
    expect(await store.getUserByEmail('dave@example.com')).toBeNull()
  })
})

describe('Firebase export', () => {
  it('reads auth:export CSV; the README account then signs in with its password', async () => {
    const store = adapter()
    const report = await importUsers({ adapter: store, text: FIREBASE_CSV })
    expect(report.format).toBe('firebase')
    expect(report.counts).toMatchObject({ read: 2, created: 2, failed: 0, passwordsSet: 1, accountsLinked: 1 })
    expect(report.hashFormats).toEqual({ 'firebase-scrypt': 1 })
    const stored = await passwordOf(store, 'user1@test.com')
    expect(await hasher.verify(stored!, 'user1password')).toEqual({ valid: true, needsRehash: true })
    expect((await hasher.verify(stored!, 'user1passwore')).valid).toBe(false)
    expect(await store.getUserByAccount({ provider: 'google', providerAccountId: 'g-123' })).toMatchObject({
      email: 'second@test.com',
      name: 'Second, Jr.',
    })
  })

  it('reads auth:export JSON with its linked providers', async () => {
    const json = JSON.stringify({
      users: [
        {
          localId: 'kYi4',
          email: 'user1@test.com',
          emailVerified: true,
          passwordHash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
          salt: '42xEC+ixf3L2lw==',
          displayName: 'Test User 1',
          providerUserInfo: [
            { providerId: 'password', rawId: 'user1@test.com' },
            { providerId: 'github.com', rawId: '777' },
          ],
        },
      ],
    })
    const store = adapter()
    const report = await importUsers({ adapter: store, text: json })
    expect(report.counts).toMatchObject({ created: 1, passwordsSet: 1, accountsLinked: 1 })
    expect(await store.getUserByAccount({ provider: 'github', providerAccountId: '777' })).toMatchObject({ email: 'user1@test.com' })
    expect((await hasher.verify((await passwordOf(store, 'user1@test.com'))!, 'user1password')).valid).toBe(true)
  })
})

describe('idempotence and dry run', () => {
  it('skips what is already there on a second run', async () => {
    const store = adapter()
    await importUsers({ adapter: store, text: betterAuthExport })
    const again = await importUsers({ adapter: store, text: betterAuthExport })
    expect(again.counts).toEqual({ read: 2, created: 0, updated: 0, skipped: 2, failed: 0, passwordsSet: 0, accountsLinked: 0 })
  })

  it('adds a password and an account to an existing user who lacks them, and never replaces a password', async () => {
    const store = adapter()
    await store.createUser({ id: 'local-alice', email: 'alice@example.com', emailVerified: null })
    await store.createUser({ id: 'local-bob', email: 'bob@example.com', emailVerified: null })
    await store.setUserPassword!('local-bob', 'existing-hash')
    const report = await importUsers({ adapter: store, text: betterAuthExport })
    expect(report.counts).toMatchObject({ created: 0, updated: 2, passwordsSet: 1, accountsLinked: 1 })
    expect(await store.getUserPassword!('local-alice')).toBe(betterAuthHash)
    expect(await store.getUserPassword!('local-bob')).toBe('existing-hash')
    expect(await store.getUserByAccount({ provider: 'github', providerAccountId: '4242' })).toMatchObject({ id: 'local-bob' })
  })

  it('reports the same counts on a dry run and writes nothing', async () => {
    const store = adapter()
    const dry = await importUsers({ adapter: store, text: betterAuthExport, dryRun: true })
    expect(dry.dryRun).toBe(true)
    expect(dry.counts).toEqual({ read: 2, created: 2, updated: 0, skipped: 0, failed: 0, passwordsSet: 1, accountsLinked: 1 })
    expect(await store.getUserByEmail('alice@example.com')).toBeNull()
    expect(await store.getUserByAccount({ provider: 'github', providerAccountId: '4242' })).toBeNull()
  })
})

describe('input it cannot use', () => {
  it('refuses an adapter without the password method, naming it', async () => {
    const { setUserPassword: _, ...rest } = adapter()
    await expect(importUsers({ adapter: { ...rest, setUserPassword: undefined }, text: betterAuthExport })).rejects.toThrow(
      /lacks setUserPassword/,
    )
  })

  it('refuses an export that is not the named format', async () => {
    await expect(importUsers({ adapter: adapter(), text: '{"users": 1}', format: 'firebase' })).rejects.toBeInstanceOf(ImportFormatError)
  })

  it('detects each format and reads quoted CSV', () => {
    expect(detectFormat('{"user": [], "account": []}')).toBe('better-auth')
    expect(detectFormat('{"users": []}')).toBe('firebase')
    expect(detectFormat('{"email":"a@b"}\n{"email":"c@d"}')).toBe('auth0')
    expect(detectFormat('uid,a@b.c,false')).toBe('firebase')
    expect(parseCsv('a,"b ""q"", c",\r\n\n"multi\nline",x')).toEqual([
      ['a', 'b "q", c', ''],
      ['multi\nline', 'x'],
    ])
  })
})

describe('the import-users command', () => {
  function io(files: Record<string, string>, modules: Record<string, Record<string, unknown>>) {
    const out: string[] = []
    const err: string[] = []
    return {
      out,
      err,
      io: {
        readFile: async (path: string) => files[path] ?? Promise.reject(new Error(`ENOENT ${path}`)),
        importModule: async (path: string) => modules[path] ?? Promise.reject(new Error(`cannot import ${path}`)),
        out: (text: string) => void out.push(text),
        err: (text: string) => void err.push(text),
      },
    }
  }

  it('prints counts for a dry run through the config module’s adapter', async () => {
    const store = adapter()
    const host = io({ 'users.json': betterAuthExport }, { './auth.js': { default: { adapter: store } } })
    expect(await importUsersCommand(['users.json', '--config', './auth.js', '--dry-run'], host.io)).toBe(0)
    expect(host.out.join('\n')).toContain('Dry run (nothing written): 2 users read from a better-auth export')
    expect(host.out.join('\n')).toContain('created 2, updated 0, skipped 0, failed 0')
    expect(await store.getUserByEmail('alice@example.com')).toBeNull()
  })

  it('prints the JSON report and exits 2 when records failed', async () => {
    const host = io({ 'u.ndjson': '{"email":"nope"}' }, { './auth.js': { adapter: adapter() } })
    expect(await importUsersCommand(['u.ndjson', '--config=./auth.js', '--json', '--format', 'auth0'], host.io)).toBe(2)
    expect(JSON.parse(host.out[0]!)).toMatchObject({ counts: { failed: 1 } })
  })

  it('answers missing or unknown arguments with its usage and exit 1', async () => {
    const host = io({}, {})
    expect(await importUsersCommand(['users.json'], host.io)).toBe(1)
    expect(await importUsersCommand(['users.json', '--config', 'x', '--force'], host.io)).toBe(1)
    expect(await importUsersCommand(['users.json', '--config', 'x', '--format', 'okta'], host.io)).toBe(1)
    expect(host.err.join('\n')).toContain('Unknown option "--force"')
    expect(host.err.join('\n')).toContain('Unknown format "okta"')
    expect(host.err.at(0)).toContain('Usage: authchart import-users')
  })

  it('says so when the config module has no adapter', async () => {
    const host = io({ 'users.json': '{}' }, { './auth.js': { default: {} } })
    expect(await importUsersCommand(['users.json', '--config', './auth.js'], host.io)).toBe(1)
    expect(host.err[0]).toContain('exports no adapter')
  })
})
