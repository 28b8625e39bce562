/**
 * `authchart import-users`: reads the user export of the system a team leaves (better-auth's
 * `user` and `account` tables as JSON, Auth0's bulk export NDJSON with `passwordHash`, Firebase's
 * `auth:export` JSON or CSV) and writes users, linked OAuth accounts and password hashes through
 * the adapter. The hashes are stored as they are: the hasher verifies each imported format and
 * re-hashes it at the user's first sign-in.
 *
 * Idempotent: a user whose address exists is not created again; what it lacks (a password, a
 * linked account) is added and reported as `updated`, otherwise it is `skipped`. `dryRun` reads
 * everything and writes nothing. Runtime-neutral: the CLI hands in the file text and the adapter.
 *
 * @module
 */
import { defaultNormalizer } from '../email/normalize.js'
import type { AdapterAccount, AdapterUser, Awaitable } from '../shapes.js'
import { findFormat, firebaseStoredHash } from './formats/index.js'

/** The export formats read. */
export type ExportFormat = 'better-auth' | 'auth0' | 'firebase'

/** What the import needs of the adapter (the password method is the password flows'). */
export interface ImportAdapter {
  createUser?(user: AdapterUser): Awaitable<AdapterUser>
  getUserByEmail?(email: string): Awaitable<AdapterUser | null>
  getUserByAccount?(account: Pick<AdapterAccount, 'provider' | 'providerAccountId'>): Awaitable<AdapterUser | null>
  linkAccount?(account: AdapterAccount): unknown
  getUserPassword?(userId: string): Awaitable<string | null>
  setUserPassword?(userId: string, hash: string | null): Awaitable<void>
}

/** A linked account read from an export, before it has a user id. */
export type ImportedAccount = Pick<AdapterAccount, 'provider' | 'providerAccountId' | 'type'> &
  Partial<Pick<AdapterAccount, 'access_token' | 'refresh_token' | 'id_token' | 'scope' | 'expires_at'>>

/** One user read from an export, before it is written. */
export interface ImportRecord {
  /** Where it was read (`line 3`, `users[2]`), for the report. */
  origin: string
  /** The source system's id. */
  sourceId?: string
  email: unknown
  emailVerified: boolean
  name?: string | null
  image?: string | null
  passwordHash?: string
  accounts: ImportedAccount[]
}

/** One record's outcome. */
export interface ImportOutcome {
  origin: string
  email?: string
  outcome: 'created' | 'updated' | 'skipped' | 'failed'
  userId?: string
  sourceId?: string
  /** What was or would be done beyond the user row, or why it failed. */
  detail?: string
}

/** Counts and per-record outcomes of one import. */
export interface ImportReport {
  format: ExportFormat
  dryRun: boolean
  counts: { read: number; created: number; updated: number; skipped: number; failed: number; passwordsSet: number; accountsLinked: number }
  /** Imported hashes by format id (`bcrypt`, `firebase-scrypt`, …): the hasher must accept each. */
  hashFormats: Record<string, number>
  outcomes: ImportOutcome[]
}

/** Options of {@link importUsers}. */
export interface ImportUsersOptions {
  adapter: ImportAdapter
  /** The export file's text. */
  text: string
  /** Detected from the text when not given. */
  format?: ExportFormat
  dryRun?: boolean
  /** Keep the source system's user ids (default `false`: the adapter assigns new ones). */
  keepIds?: boolean
}

/** Thrown for an export that cannot be read at all (not for a bad record: that is reported). */
export class ImportFormatError extends Error {
  override name = 'ImportFormatError'
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)
const truthy = (value: unknown): boolean => value === true || value === 'true' || value === 1 || value === '1'

/** Reads RFC 4180 CSV: quoted fields, doubled quotes, CRLF or LF. */
export function parseCsv(input: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < input.length; i++) {
    const char = input[i]!
    if (quoted) {
      if (char === '"' && input[i + 1] === '"') (field += '"'), i++
      else if (char === '"') quoted = false
      else field += char
    } else if (char === '"' && field === '') quoted = true
    else if (char === ',') row.push(field), (field = '')
    else if (char === '\n' || char === '\r') {
      if (char === '\r' && input[i + 1] === '\n') i++
      row.push(field), rows.push(row), (row = []), (field = '')
    } else field += char
  }
  if (field !== '' || row.length > 0) row.push(field), rows.push(row)
  return rows.filter((cells) => cells.some((cell) => cell !== ''))
}

/** The export format of `input`, by its shape. */
export function detectFormat(input: string): ExportFormat {
  const trimmed = input.trimStart()
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed)
      if (isObject(parsed) && Array.isArray(parsed.users)) return 'firebase'
      if (isObject(parsed) && (Array.isArray(parsed.user) || Array.isArray(parsed.account))) return 'better-auth'
      return 'auth0'
    } catch {
      return 'auth0' // several JSON objects, one per line
    }
  }
  if (trimmed.startsWith('[')) return 'auth0'
  return 'firebase' // CSV
}

// Firebase names providers by domain; Auth.js by id.
const FIREBASE_PROVIDERS: Record<string, string> = {
  'google.com': 'google',
  'facebook.com': 'facebook',
  'twitter.com': 'twitter',
  'github.com': 'github',
  'apple.com': 'apple',
  'microsoft.com': 'microsoft-entra-id',
  'yahoo.com': 'yahoo',
}

function oauthAccount(provider: string, providerAccountId: string, extra: Partial<ImportedAccount> = {}): ImportedAccount {
  return { ...extra, type: 'oauth', provider, providerAccountId }
}

function readFirebaseJson(users: unknown[]): ImportRecord[] {
  return users.map((user, index) => {
    const record = isObject(user) ? user : {}
    const salt = text(record.salt)
    const hash = text(record.passwordHash)
    const accounts = (Array.isArray(record.providerUserInfo) ? record.providerUserInfo : [])
      .filter(isObject)
      .filter((info) => text(info.providerId) && text(info.rawId) && info.providerId !== 'password' && info.providerId !== 'phone')
      .map((info) => oauthAccount(FIREBASE_PROVIDERS[info.providerId as string] ?? (info.providerId as string), info.rawId as string))
    return {
      origin: `users[${index}]`,
      sourceId: text(record.localId),
      email: record.email,
      emailVerified: truthy(record.emailVerified),
      name: text(record.displayName) ?? null,
      image: text(record.photoUrl) ?? null,
      passwordHash: salt && hash ? firebaseStoredHash(salt, hash) : undefined,
      accounts,
    }
  })
}

// `firebase auth:export users.csv` columns, by position (the file has no header row).
const FIREBASE_CSV_PROVIDERS = [
  ['google', 7],
  ['facebook', 11],
  ['twitter', 15],
  ['github', 19],
] as const

function readFirebaseCsv(input: string): ImportRecord[] {
  return parseCsv(input).map((cells, index) => {
    const [uid, email, verified, hash, salt, name, photo] = cells
    return {
      origin: `line ${index + 1}`,
      sourceId: text(uid),
      email,
      emailVerified: truthy(verified),
      name: text(name) ?? null,
      image: text(photo) ?? null,
      passwordHash: text(salt) && text(hash) ? firebaseStoredHash(salt!, hash!) : undefined,
      accounts: FIREBASE_CSV_PROVIDERS.filter(([, column]) => text(cells[column])).map(([provider, column]) =>
        oauthAccount(provider, cells[column]!),
      ),
    }
  })
}

function readAuth0(input: string): ImportRecord[] {
  const trimmed = input.trim()
  const entries: { origin: string; value: unknown }[] = trimmed.startsWith('[')
    ? (JSON.parse(trimmed) as unknown[]).map((value, index) => ({ origin: `[${index}]`, value }))
    : trimmed.split(/\r?\n/).flatMap((line, index) => {
        if (line.trim() === '') return []
        try {
          return [{ origin: `line ${index + 1}`, value: JSON.parse(line) as unknown }]
        } catch {
          return [{ origin: `line ${index + 1}`, value: { __unreadable: true } }]
        }
      })
  return entries.map(({ origin, value }) => {
    const record = isObject(value) ? value : {}
    const oid = isObject(record._id) ? text(record._id.$oid) : text(record._id)
    return {
      origin,
      sourceId: text(record.user_id) ?? oid,
      email: record.__unreadable ? undefined : record.email,
      emailVerified: truthy(record.email_verified),
      name: text(record.name) ?? null,
      image: text(record.picture) ?? null,
      passwordHash: text(record.passwordHash),
      accounts: [],
    }
  })
}

function readBetterAuth(parsed: Record<string, unknown>): ImportRecord[] {
  const users = (parsed.user ?? parsed.users ?? []) as unknown[]
  const accounts = ((parsed.account ?? parsed.accounts ?? []) as unknown[]).filter(isObject)
  return users.map((user, index) => {
    const record = isObject(user) ? user : {}
    const own = accounts.filter((account) => account.userId === record.id)
    const credential = own.find((account) => account.providerId === 'credential')
    return {
      origin: `user[${index}]`,
      sourceId: text(record.id),
      email: record.email,
      emailVerified: truthy(record.emailVerified),
      name: text(record.name) ?? null,
      image: text(record.image) ?? null,
      passwordHash: text(credential?.password),
      accounts: own
        .filter((account) => account.providerId !== 'credential' && text(account.providerId) && text(account.accountId))
        .map((account) => {
          const expiry = account.accessTokenExpiresAt ? Date.parse(String(account.accessTokenExpiresAt)) : Number.NaN
          const tokens: Partial<ImportedAccount> = {}
          if (text(account.accessToken)) tokens.access_token = account.accessToken as string
          if (text(account.refreshToken)) tokens.refresh_token = account.refreshToken as string
          if (text(account.idToken)) tokens.id_token = account.idToken as string
          if (text(account.scope)) tokens.scope = account.scope as string
          if (Number.isFinite(expiry)) tokens.expires_at = Math.floor(expiry / 1000)
          return oauthAccount(account.providerId as string, account.accountId as string, tokens)
        }),
    }
  })
}

/**
 * Reads an export into records.
 *
 * @throws {ImportFormatError} when the text is not the format's shape at all.
 */
export function readExport(input: string, format: ExportFormat = detectFormat(input)): ImportRecord[] {
  try {
    if (format === 'auth0') return readAuth0(input)
    const trimmed = input.trimStart()
    if (format === 'firebase') {
      if (!trimmed.startsWith('{')) return readFirebaseCsv(input)
      const parsed: unknown = JSON.parse(trimmed)
      if (!isObject(parsed) || !Array.isArray(parsed.users)) throw new ImportFormatError('a Firebase export has a "users" array')
      return readFirebaseJson(parsed.users)
    }
    const parsed: unknown = JSON.parse(trimmed)
    if (!isObject(parsed)) throw new ImportFormatError('a better-auth export is an object with "user" and "account" arrays')
    return readBetterAuth(parsed)
  } catch (error) {
    if (error instanceof ImportFormatError) throw error
    throw new ImportFormatError(`the export is not readable as ${format}: ${(error as Error).message}`, { cause: error })
  }
}

const REQUIRED: readonly (keyof ImportAdapter)[] = ['createUser', 'getUserByEmail', 'setUserPassword', 'linkAccount', 'getUserByAccount']

/**
 * Imports an export into the adapter and reports what happened to every record. A record that
 * fails (a bad address, an unrecognised hash, an adapter error) is reported and the rest go on.
 *
 * @throws {ImportFormatError} when the export cannot be read, or the adapter lacks a method.
 */
export async function importUsers(options: ImportUsersOptions): Promise<ImportReport> {
  const { adapter, dryRun = false } = options
  const missing = REQUIRED.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length) throw new ImportFormatError(`the adapter lacks ${missing.join(', ')}, which the import writes through`)
  const format = options.format ?? detectFormat(options.text)
  const records = readExport(options.text, format)
  const report: ImportReport = {
    format,
    dryRun,
    counts: { read: records.length, created: 0, updated: 0, skipped: 0, failed: 0, passwordsSet: 0, accountsLinked: 0 },
    hashFormats: {},
    outcomes: [],
  }
  const seen = new Set<string>()
  for (const record of records) {
    const outcome = await importOne(adapter, record, options, seen, report)
    report.counts[outcome.outcome]++
    report.outcomes.push(outcome)
  }
  return report
}

async function importOne(
  adapter: ImportAdapter,
  record: ImportRecord,
  options: ImportUsersOptions,
  seen: Set<string>,
  report: ImportReport,
): Promise<ImportOutcome> {
  const base = { origin: record.origin, ...(record.sourceId ? { sourceId: record.sourceId } : {}) }
  let email: string
  try {
    email = defaultNormalizer(record.email)
  } catch {
    return { ...base, outcome: 'failed', detail: 'no valid e-mail address' }
  }
  if (seen.has(email)) return { ...base, email, outcome: 'failed', detail: 'the address appears twice in the export' }
  seen.add(email)
  const hashFormat = record.passwordHash === undefined ? undefined : findFormat(record.passwordHash)
  if (record.passwordHash !== undefined && !hashFormat)
    return { ...base, email, outcome: 'failed', detail: 'the password hash is in no format this library verifies' }
  const dryRun = options.dryRun === true
  try {
    const existing = await adapter.getUserByEmail!(email)
    const done: string[] = []
    let userId = existing?.id
    if (!existing && !dryRun) {
      const created = await adapter.createUser!({
        ...(options.keepIds && record.sourceId ? { id: record.sourceId } : {}),
        email,
        emailVerified: record.emailVerified ? new Date() : null,
        name: record.name ?? null,
        image: record.image ?? null,
      } as AdapterUser)
      userId = created.id
    }
    if (hashFormat && record.passwordHash) {
      const current = existing ? await adapter.getUserPassword?.(existing.id) : null
      if (!current) {
        if (!dryRun) await adapter.setUserPassword!(userId!, record.passwordHash)
        report.counts.passwordsSet++
        report.hashFormats[hashFormat.id] = (report.hashFormats[hashFormat.id] ?? 0) + 1
        done.push(`password (${hashFormat.id})`)
      }
    }
    for (const account of record.accounts) {
      const owner = await adapter.getUserByAccount!({ provider: account.provider, providerAccountId: account.providerAccountId })
      if (owner && owner.id !== userId) {
        done.push(`${account.provider} account already linked to another user, left alone`)
        continue
      }
      if (owner) continue
      if (!dryRun) await adapter.linkAccount!({ ...account, userId: userId! } as AdapterAccount)
      report.counts.accountsLinked++
      done.push(`${account.provider} account`)
    }
    const outcome = !existing ? 'created' : done.some((d) => !d.endsWith('left alone')) ? 'updated' : 'skipped'
    return {
      ...base,
      email,
      outcome,
      ...(userId ? { userId } : {}),
      ...(done.length ? { detail: done.join(', ') } : existing ? { detail: 'exists, nothing to add' } : {}),
    }
  } catch (error) {
    return { ...base, email, outcome: 'failed', detail: `adapter: ${(error as Error).message}` }
  }
}

/** The report as the CLI prints it: counts, hash formats, then each failure. */
export function formatImportReport(report: ImportReport): string {
  const { counts } = report
  const lines = [
    `${report.dryRun ? 'Dry run (nothing written): ' : ''}${counts.read} users read from a ${report.format} export`,
    `  created ${counts.created}, updated ${counts.updated}, skipped ${counts.skipped}, failed ${counts.failed}`,
    `  passwords set ${counts.passwordsSet}, accounts linked ${counts.accountsLinked}`,
  ]
  const formats = Object.entries(report.hashFormats)
  if (formats.length) lines.push(`  password hashes: ${formats.map(([id, n]) => `${id} ${n}`).join(', ')}`)
  if (report.hashFormats['firebase-scrypt'])
    lines.push("  Firebase hashes verify only with the project's hash parameters: set passwordHasher({ imported: { firebase } })")
  const failures = report.outcomes.filter((o) => o.outcome === 'failed')
  if (failures.length) lines.push('Failures:', ...failures.map((o) => `  ${o.origin}${o.email ? ` <${o.email}>` : ''}: ${o.detail}`))
  return lines.join('\n')
}
