/**
 * The organisation tables and methods of the PostgreSQL adapter (spread into `PostgresAdapter`,
 * the tables created by its `migrate()`). The uniqueness rules are the database's: a slug is
 * unique across organisations, a membership unique per (organisation, user), and an invitation is
 * settled by one conditional UPDATE, so of two concurrent acceptances one wins; a membership is
 * changed by one statement that locks the rows its checks read, so of two owners demoting each
 * other at once one remains.
 *
 * @module
 */
import {
  takesAnOwnerAway,
  type AdapterInvitation,
  type AdapterMembership,
  type AdapterOrganization,
  type InvitationStatus,
  type MembershipChangeResult,
  type MembershipStatus,
  type OrganizationAdapterMethods,
} from '../core/organizations/types.js'

/** The client the adapter runs its statements on (the adapter's own `Queryable`). */
interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>
}

/** The organisation table names (quoted) under `prefix` (already checked by the adapter). */
export function organizationTableNames(tables: { index(name: string): string }) {
  const name = (table: string) => tables.index(table)
  return { organizations: name('organizations'), memberships: name('memberships'), invitations: name('invitations') }
}

/** The organisation tables, as an idempotent script; `users` is the quoted users table. */
export function organizationsSchema(tables: { users: string; index(name: string): string }): string {
  const t = organizationTableNames(tables)
  return `CREATE TABLE IF NOT EXISTS ${t.organizations} (
  id TEXT PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  "verifiedDomains" TEXT[] NOT NULL DEFAULT '{}',
  metadata JSONB NOT NULL DEFAULT '{}',
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS ${t.memberships} (
  "organizationId" TEXT NOT NULL REFERENCES ${t.organizations} (id) ON DELETE CASCADE,
  "userId" TEXT NOT NULL REFERENCES ${tables.users} (id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('invited', 'active', 'suspended', 'removed')),
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("organizationId", "userId")
);
CREATE INDEX IF NOT EXISTS ${tables.index('memberships_user_idx')} ON ${t.memberships} ("userId");
CREATE TABLE IF NOT EXISTS ${t.invitations} (
  id TEXT PRIMARY KEY,
  "organizationId" TEXT NOT NULL REFERENCES ${t.organizations} (id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  role TEXT NOT NULL,
  "inviterId" TEXT NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('sent', 'accepted', 'declined', 'expired', 'revoked')),
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ${tables.index('invitations_organization_idx')} ON ${t.invitations} ("organizationId");`
}

type Row = Record<string, unknown>
const date = (value: unknown) => (value instanceof Date ? value : new Date(String(value)))

const toOrganization = (row: Row): AdapterOrganization => ({
  id: String(row.id),
  slug: String(row.slug),
  name: String(row.name),
  verifiedDomains: [...((row.verifiedDomains as string[] | null) ?? [])],
  metadata: (typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata ?? {}) as Record<string, unknown>,
  createdAt: date(row.createdAt),
})
const toMembership = (row: Row): AdapterMembership => ({
  organizationId: String(row.organizationId),
  userId: String(row.userId),
  role: String(row.role),
  status: row.status as MembershipStatus,
  createdAt: date(row.createdAt),
})
const toInvitation = (row: Row): AdapterInvitation => ({
  id: String(row.id),
  organizationId: String(row.organizationId),
  email: String(row.email),
  role: String(row.role),
  inviterId: String(row.inviterId),
  expires: date(row.expires),
  status: row.status as InvitationStatus,
  createdAt: date(row.createdAt),
})

/** The organisation methods over `client`, on the tables named after the adapter's `tables`. */
export function postgresOrganizations(
  client: Queryable,
  tables: { users: string; index(name: string): string },
): Required<OrganizationAdapterMethods> {
  const t = organizationTableNames(tables)
  const first = async (text: string, params: unknown[]) => (await client.query(text, params)).rows[0] ?? null

  return {
    async createOrganization(organization) {
      const row = await first(
        `INSERT INTO ${t.organizations} (id, slug, name, "verifiedDomains", metadata, "createdAt") VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [organization.id, organization.slug, organization.name, organization.verifiedDomains, JSON.stringify(organization.metadata), organization.createdAt],
      )
      return toOrganization(row!)
    },
    async getOrganization(id) {
      const row = await first(`SELECT * FROM ${t.organizations} WHERE id = $1`, [id])
      return row ? toOrganization(row) : null
    },
    async getOrganizationBySlug(slug) {
      const row = await first(`SELECT * FROM ${t.organizations} WHERE slug = $1`, [slug])
      return row ? toOrganization(row) : null
    },
    async createMembership(membership) {
      const row = await first(
        `INSERT INTO ${t.memberships} ("organizationId", "userId", role, status, "createdAt") VALUES ($1, $2, $3, $4, $5) RETURNING *`,
        [membership.organizationId, membership.userId, membership.role, membership.status, membership.createdAt],
      )
      return toMembership(row!)
    },
    async getMembership(organizationId, userId) {
      const row = await first(`SELECT * FROM ${t.memberships} WHERE "organizationId" = $1 AND "userId" = $2`, [organizationId, userId])
      return row ? toMembership(row) : null
    },
    async updateMembership({ organizationId, userId, role, status }) {
      const row = await first(
        `UPDATE ${t.memberships} SET role = COALESCE($3, role), status = COALESCE($4, status)
          WHERE "organizationId" = $1 AND "userId" = $2 RETURNING *`,
        [organizationId, userId, role ?? null, status ?? null],
      )
      return row ? toMembership(row) : null
    },
    async listMemberships(organizationId) {
      const { rows } = await client.query(`SELECT * FROM ${t.memberships} WHERE "organizationId" = $1 ORDER BY "createdAt", "userId"`, [organizationId])
      return rows.map(toMembership)
    },
    async changeMembership(change) {
      // One statement. It first locks, in one order, the target's row, the actor's and every
      // active owner's; a concurrent change of any of them waits for this one and then re-reads
      // the rows it left (an owner demoted meanwhile is no longer locked as one), so the last
      // active owner can never be taken away by two changes that each saw another.
      const row = await first(
        `WITH locked AS (
           SELECT "userId", role, status FROM ${t.memberships}
            WHERE "organizationId" = $1 AND ("userId" = $2 OR "userId" = $3 OR (role = 'owner' AND status = 'active'))
            ORDER BY "userId" FOR UPDATE
         ), verdict AS (
           SELECT CASE
             WHEN NOT EXISTS (SELECT 1 FROM locked WHERE "userId" = $2) THEN 'NotFound'
             WHEN NOT EXISTS (SELECT 1 FROM locked WHERE "userId" = $2 AND role = $4 AND status = $5) THEN 'Changed'
             WHEN NOT EXISTS (SELECT 1 FROM locked WHERE "userId" = $3 AND role = $6 AND status = 'active') THEN 'Changed'
             WHEN $9::boolean AND NOT EXISTS (SELECT 1 FROM locked WHERE "userId" <> $2 AND role = 'owner' AND status = 'active') THEN 'LastOwner'
             ELSE 'ok' END AS verdict
         ), changed AS (
           UPDATE ${t.memberships} SET role = COALESCE($7, role), status = COALESCE($8, status)
            WHERE "organizationId" = $1 AND "userId" = $2 AND (SELECT verdict FROM verdict) = 'ok'
            RETURNING *
         )
         SELECT (SELECT verdict FROM verdict) AS verdict, changed.* FROM (SELECT 1) AS one LEFT JOIN changed ON true`,
        [
          change.organizationId,
          change.userId,
          change.actor.userId,
          change.from.role,
          change.from.status,
          change.actor.role,
          change.to.role ?? null,
          change.to.status ?? null,
          takesAnOwnerAway(change),
        ],
      )
      const verdict = String(row?.verdict)
      if (verdict === 'ok' && row?.userId !== null && row?.userId !== undefined) return { changed: toMembership(row) }
      return { refused: (verdict === 'ok' ? 'NotFound' : verdict) as Extract<MembershipChangeResult, { refused: unknown }>['refused'] }
    },
    async updateOrganization(id, fields) {
      const row = await first(
        `UPDATE ${t.organizations} SET slug = COALESCE($2, slug), name = COALESCE($3, name), metadata = COALESCE($4::jsonb, metadata)
          WHERE id = $1 RETURNING *`,
        [id, fields.slug ?? null, fields.name ?? null, fields.metadata === undefined ? null : JSON.stringify(fields.metadata)],
      )
      return row ? toOrganization(row) : null
    },
    async deleteOrganization(id) {
      // The memberships and invitations go with it (ON DELETE CASCADE), in the same statement.
      return (await first(`DELETE FROM ${t.organizations} WHERE id = $1 RETURNING id`, [id])) !== null
    },
    async createInvitation(invitation) {
      const row = await first(
        `INSERT INTO ${t.invitations} (id, "organizationId", email, role, "inviterId", expires, status, "createdAt")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [invitation.id, invitation.organizationId, invitation.email, invitation.role, invitation.inviterId, invitation.expires, invitation.status, invitation.createdAt],
      )
      return toInvitation(row!)
    },
    async getInvitation(id) {
      const row = await first(`SELECT * FROM ${t.invitations} WHERE id = $1`, [id])
      return row ? toInvitation(row) : null
    },
    async settleInvitation({ id, status, at }) {
      // One conditional UPDATE: a concurrent settlement waits for this one and re-checks the WHERE
      // on the row it left, so an invitation is accepted (or revoked) once.
      const row = await first(
        `UPDATE ${t.invitations} SET status = $2
          WHERE id = $1 AND status = 'sent' AND ($2 <> 'accepted' OR expires > $3) RETURNING *`,
        [id, status, at],
      )
      return row ? toInvitation(row) : null
    },
  }
}
