/**
 * The API-key methods of the PostgreSQL adapter (see `core/api-keys/types.ts`), over a table of
 * their own, `<prefix>_api_keys`, beside the users table. The table is created on the first call
 * (idempotent, under the adapter's advisory lock), so `migrate()` needs no change to have it.
 *
 * @module
 */
import type { AdapterApiKey, ApiKeyAdapterMethods } from '../core/api-keys/types.js'
import type { Queryable } from './postgres.js'

/** What the methods need of the adapter: the client's query and the layout's names. */
export interface PostgresApiKeyTables {
  /** The quoted users table the keys belong to. */
  users: string
  /** The unquoted column that names a row's user. */
  userLink: string
  /** The quoted index name for `name` under the layout's prefix. */
  index: (name: string) => string
  /** The advisory lock name the schema is created under. */
  lock: string
}

type Rows = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>

const dateOrNull = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string))

/** The table of keys (ours): the hash only, never a secret; gone with its user. */
export function apiKeysTable(t: PostgresApiKeyTables): string {
  const table = t.index('api_keys')
  return `CREATE TABLE IF NOT EXISTS ${table} (
  id TEXT PRIMARY KEY,
  "${t.userLink}" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  scopes TEXT[] NOT NULL,
  hash TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL,
  "expiresAt" TIMESTAMPTZ,
  "revokedAt" TIMESTAMPTZ,
  "lastUsedAt" TIMESTAMPTZ,
  "previousHash" TEXT,
  "previousUntil" TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS ${t.index('api_keys_user_idx')} ON ${table} ("${t.userLink}");`
}

/** The API-key methods over `client` (the adapter's) and the layout's names. */
export function postgresApiKeyMethods(client: Queryable, t: PostgresApiKeyTables): Required<ApiKeyAdapterMethods> {
  const rows: Rows = async (text, params) => (await client.query(text, params)).rows
  const exec = (script: string) => (client.exec ? client.exec(script) : client.query(script))
  const table = t.index('api_keys')
  const link = `"${t.userLink}"`
  let ready: Promise<unknown> | undefined
  const ensure = () => {
    ready ??= exec(`SELECT pg_advisory_xact_lock(hashtext('${t.lock}'));\n${apiKeysTable(t)}`).catch((error: unknown) => {
      ready = undefined
      throw error
    })
    return ready
  }
  const query: Rows = async (text, params) => {
    await ensure()
    return rows(text, params)
  }
  const toKey = (row: Record<string, unknown>): AdapterApiKey => ({
    id: String(row.id),
    userId: String(row[t.userLink]),
    name: String(row.name),
    scopes: (row.scopes as string[]) ?? [],
    hash: String(row.hash),
    createdAt: new Date(row.createdAt as string),
    expiresAt: dateOrNull(row.expiresAt),
    revokedAt: dateOrNull(row.revokedAt),
    lastUsedAt: dateOrNull(row.lastUsedAt),
    previousHash: row.previousHash === null || row.previousHash === undefined ? null : String(row.previousHash),
    previousUntil: dateOrNull(row.previousUntil),
  })
  return {
    async createApiKey(key) {
      const [row] = await query(
        `INSERT INTO ${table} (id, ${link}, name, scopes, hash, "createdAt", "expiresAt", "revokedAt", "lastUsedAt", "previousHash", "previousUntil")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
        [key.id, key.userId, key.name, key.scopes, key.hash, key.createdAt, key.expiresAt, key.revokedAt, key.lastUsedAt, key.previousHash, key.previousUntil],
      )
      return toKey(row!)
    },
    async getApiKey(id) {
      const [row] = await query(`SELECT * FROM ${table} WHERE id = $1`, [id])
      return row ? toKey(row) : null
    },
    async listApiKeys(userId) {
      return (await query(`SELECT * FROM ${table} WHERE ${link} = $1 ORDER BY "createdAt", id`, [userId])).map(toKey)
    },
    async updateApiKey(change) {
      const columns = (['hash', 'revokedAt', 'lastUsedAt', 'previousHash', 'previousUntil'] as const).filter((column) => change[column] !== undefined)
      if (columns.length === 0) {
        const [row] = await query(`SELECT * FROM ${table} WHERE id = $1`, [change.id])
        return row ? toKey(row) : null
      }
      const set = columns.map((column, index) => `"${column}" = $${index + 2}`).join(', ')
      const [row] = await query(`UPDATE ${table} SET ${set} WHERE id = $1 RETURNING *`, [change.id, ...columns.map((column) => change[column])])
      return row ? toKey(row) : null
    },
  }
}
