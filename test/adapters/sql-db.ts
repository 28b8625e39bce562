/**
 * Direct readers of the SQL tables for the contract suite: plain SELECTs, so a bug in the adapter's
 * own queries cannot hide itself.
 *
 * @module
 */
import type { Queryable } from '../../adapters/postgres.js'
import type { ContractDb } from './contract.js'

const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)))
const clean = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null))

/** Readers over `client`, for tables with `prefix`. */
export function sqlContractDb(client: Queryable, prefix = ''): ContractDb {
  const p = prefix ? `${prefix}_` : ''
  const one = async (text: string, params: unknown[]) => (await client.query(text, params)).rows[0] ?? null
  return {
    async user(id) {
      const row = await one(`SELECT * FROM "${p}users" WHERE id = $1`, [id])
      return row && ({ ...row, emailVerified: row.emailVerified && date(row.emailVerified) } as never)
    },
    async account({ provider, providerAccountId }) {
      const row = await one(`SELECT * FROM "${p}accounts" WHERE provider = $1 AND "providerAccountId" = $2`, [
        provider,
        providerAccountId,
      ])
      return row && ({ ...clean(row), expires_at: Number(row.expires_at) } as never)
    },
    async session(sessionToken) {
      const row = await one(`SELECT * FROM "${p}sessions" WHERE "sessionToken" = $1`, [sessionToken])
      return row && ({ ...row, expires: date(row.expires) } as never)
    },
    async verificationToken({ identifier, token }) {
      const row = await one(`SELECT * FROM "${p}verification_token" WHERE identifier = $1 AND token = $2`, [
        identifier,
        token,
      ])
      return row && ({ ...row, expires: date(row.expires) } as never)
    },
    async authenticator(credentialID) {
      const row = await one(`SELECT * FROM "${p}authenticators" WHERE "credentialID" = $1`, [credentialID])
      return row && ({ ...row, counter: Number(row.counter) } as never)
    },
  }
}
