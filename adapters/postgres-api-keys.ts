/**
 * The API-key methods of the PostgreSQL adapter (see `core/api-keys/types.ts`), over a table of
 * their own, `<prefix>_api_keys`, beside the users and organisations tables. The adapter's
 * `migrate()` creates it with the others.
 *
 * @module
 */
import type { AdapterApiKey, ApiKeyAdapterMethods } from '../core/api-keys/types.js'
import type { Queryable } from './postgres.js'
import { organizationTableNames } from './postgres-organizations.js'

/** What the methods need of the adapter: the client's query and the layout's names. */
export interface PostgresApiKeyTables {
  /** The quoted users table the keys belong to. */
  users: string
  /** The unquoted column that names a row's user. */
  userLink: string
  /** The quoted index name for `name` under the layout's prefix. */
  index: (name: string) => string
}

type Rows = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>

const dateOrNull = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string))

/**
 * The table of keys (ours), as an idempotent script: the hash only, never a secret; gone with the
 * user who created it, and with the organisation that owns it.
 */
export function apiKeysTable(t: PostgresApiKeyTables): string {
  const table = t.index('api_keys')
  const { organizations } = organizationTableNames(t)
  return `CREATE TABLE IF NOT EXISTS ${table} (
  id TEXT PRIMARY KEY,
  "${t.userLink}" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  "organizationId" TEXT REFERENCES ${organizations} (id) ON DELETE CASCADE,
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
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS "organizationId" TEXT REFERENCES ${organizations} (id) ON DELETE CASCADE;
CREATE INDEX IF NOT EXISTS ${t.index('api_keys_user_idx')} ON ${table} ("${t.userLink}");
CREATE INDEX IF NOT EXISTS ${t.index('api_keys_organization_idx')} ON ${table} ("organizationId");`
}

/** The API-key methods over `client` (the adapter's) and the layout's names. */
export function postgresApiKeyMethods(client: Queryable, t: PostgresApiKeyTables): Required<ApiKeyAdapterMethods> {
  const query: Rows = async (text, params) => (await client.query(text, params)).rows
  const table = t.index('api_keys')
  const link = `"${t.userLink}"`
  const toKey = (row: Record<string, unknown>): AdapterApiKey => ({
    id: String(row.id),
    userId: String(row[t.userLink]),
    organizationId: row.organizationId === null || row.organizationId === undefined ? null : String(row.organizationId),
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
        `INSERT INTO ${table} (id, ${link}, "organizationId", name, scopes, hash, "createdAt", "expiresAt", "revokedAt", "lastUsedAt", "previousHash", "previousUntil")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
        [
          key.id,
          key.userId,
          key.organizationId ?? null,
          key.name,
          key.scopes,
          key.hash,
          key.createdAt,
          key.expiresAt,
          key.revokedAt,
          key.lastUsedAt,
          key.previousHash,
          key.previousUntil,
        ],
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
    async listOrganizationApiKeys(organizationId) {
      return (await query(`SELECT * FROM ${table} WHERE "organizationId" = $1 ORDER BY "createdAt", id`, [organizationId])).map(toKey)
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
