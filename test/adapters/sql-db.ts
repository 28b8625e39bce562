/**
 * Direct readers of the SQL tables for the contract suite: plain SELECTs, so a bug in the adapter's
 * own queries cannot hide itself. Only the table names come from the adapter module.
 *
 * @module
 */
import { tableNames, type PostgresLayout, type Queryable } from '../../adapters/postgres.js'
import type { ContractDb } from './contract.js'

const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)))
const clean = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null))

/** Readers over `client`, for the tables of `layout` with `prefix`. */
export function sqlContractDb(client: Queryable, prefix?: string, layout: PostgresLayout = 'pg-adapter'): ContractDb {
  const t = tableNames(prefix, layout)
  const one = async (text: string, params: unknown[]) => (await client.query(text, params)).rows[0] ?? null
  // The hosted layout links rows to their user through a `user` column; records call it `userId`.
  const linked = (row: Record<string, unknown>) => {
    const { [t.userLink]: user, ...rest } = row
    return { ...rest, userId: user }
  }
  return {
    async user(id) {
      const row = await one(`SELECT * FROM ${t.users} WHERE id = $1`, [id])
      return row && ({ ...row, emailVerified: row.emailVerified && date(row.emailVerified) } as never)
    },
    async account({ provider, providerAccountId }) {
      const row = await one(`SELECT * FROM ${t.accounts} WHERE provider = $1 AND "providerAccountId" = $2`, [
        provider,
        providerAccountId,
      ])
      return row && ({ ...clean(linked(row)), expires_at: Number(row.expires_at) } as never)
    },
    async session(sessionToken) {
      const row = await one(`SELECT * FROM ${t.sessions} WHERE "sessionToken" = $1`, [sessionToken])
      return row && ({ ...linked(row), expires: date(row.expires) } as never)
    },
    async verificationToken({ identifier, token }) {
      // The token's own fields: the hosted layout's record id is the platform's, not the token's.
      const row = await one(`SELECT identifier, token, expires FROM ${t.verificationTokens} WHERE identifier = $1 AND token = $2`, [
        identifier,
        token,
      ])
      return row && ({ ...row, expires: date(row.expires) } as never)
    },
    async authenticator(credentialID) {
      const row = await one(`SELECT * FROM ${t.authenticators} WHERE "credentialID" = $1`, [credentialID])
      return row && ({ ...linked(row), counter: Number(row.counter) } as never)
    },
  }
}
