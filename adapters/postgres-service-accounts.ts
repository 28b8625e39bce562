/**
 * The service-account methods of the PostgreSQL adapter (see `core/service-accounts/types.ts`),
 * over a table of their own, `<prefix>_service_accounts`. The adapter's `migrate()` creates it
 * with the others.
 *
 * @module
 */
import type { AdapterServiceAccount, ServiceAccountAdapterMethods, ServiceAccountPublicJwk } from '../core/service-accounts/types.js'
import type { Queryable } from './postgres.js'
import type { PostgresApiKeyTables } from './postgres-api-keys.js'
import { organizationTableNames } from './postgres-organizations.js'

type Rows = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>

/**
 * The table of service accounts (ours), as an idempotent script: the secret's keyed hash only,
 * never a secret; gone with the user who created it, and with the organisation that owns it.
 */
export function serviceAccountsTable(t: PostgresApiKeyTables): string {
  const table = t.index('service_accounts')
  const { organizations } = organizationTableNames(t)
  return `CREATE TABLE IF NOT EXISTS ${table} (
  id TEXT PRIMARY KEY,
  "${t.userLink}" TEXT NOT NULL REFERENCES ${t.users} (id) ON DELETE CASCADE,
  "organizationId" TEXT REFERENCES ${organizations} (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  scopes TEXT[] NOT NULL,
  "secretHash" TEXT,
  "publicJwk" JSONB,
  "createdAt" TIMESTAMPTZ NOT NULL,
  "revokedAt" TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS ${t.index('service_accounts_user_idx')} ON ${table} ("${t.userLink}");
CREATE INDEX IF NOT EXISTS ${t.index('service_accounts_organization_idx')} ON ${table} ("organizationId");`
}

/** The service-account methods over `client` (the adapter's) and the layout's names. */
export function postgresServiceAccountMethods(client: Queryable, t: PostgresApiKeyTables): Required<ServiceAccountAdapterMethods> {
  const query: Rows = async (text, params) => (await client.query(text, params)).rows
  const table = t.index('service_accounts')
  const link = `"${t.userLink}"`
  const toAccount = (row: Record<string, unknown>): AdapterServiceAccount => ({
    id: String(row.id),
    userId: String(row[t.userLink]),
    organizationId: row.organizationId === null || row.organizationId === undefined ? null : String(row.organizationId),
    name: String(row.name),
    scopes: (row.scopes as string[]) ?? [],
    secretHash: row.secretHash === null || row.secretHash === undefined ? null : String(row.secretHash),
    publicJwk: row.publicJwk === null || row.publicJwk === undefined ? null : (typeof row.publicJwk === 'string' ? JSON.parse(row.publicJwk) : row.publicJwk) as ServiceAccountPublicJwk,
    createdAt: new Date(row.createdAt as string),
    revokedAt: row.revokedAt === null || row.revokedAt === undefined ? null : new Date(row.revokedAt as string),
  })
  return {
    async createServiceAccount(account) {
      const [row] = await query(
        `INSERT INTO ${table} (id, ${link}, "organizationId", name, scopes, "secretHash", "publicJwk", "createdAt", "revokedAt")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
        [
          account.id,
          account.userId,
          account.organizationId ?? null,
          account.name,
          account.scopes,
          account.secretHash,
          account.publicJwk === null ? null : JSON.stringify(account.publicJwk),
          account.createdAt,
          account.revokedAt,
        ],
      )
      return toAccount(row!)
    },
    async getServiceAccount(id) {
      const [row] = await query(`SELECT * FROM ${table} WHERE id = $1`, [id])
      return row ? toAccount(row) : null
    },
    async listServiceAccounts(userId) {
      return (await query(`SELECT * FROM ${table} WHERE ${link} = $1 ORDER BY "createdAt", id`, [userId])).map(toAccount)
    },
    async listOrganizationServiceAccounts(organizationId) {
      return (await query(`SELECT * FROM ${table} WHERE "organizationId" = $1 ORDER BY "createdAt", id`, [organizationId])).map(toAccount)
    },
    async updateServiceAccount(change) {
      const columns = (['secretHash', 'publicJwk', 'revokedAt'] as const).filter((column) => change[column] !== undefined)
      if (columns.length === 0) {
        const [row] = await query(`SELECT * FROM ${table} WHERE id = $1`, [change.id])
        return row ? toAccount(row) : null
      }
      const set = columns.map((column, index) => `"${column}" = $${index + 2}`).join(', ')
      const values = columns.map((column) => (column === 'publicJwk' && change.publicJwk !== null ? JSON.stringify(change.publicJwk) : change[column]))
      const [row] = await query(`UPDATE ${table} SET ${set} WHERE id = $1 RETURNING *`, [change.id, ...values])
      return row ? toAccount(row) : null
    },
  }
}
