/**
 * The two-organisation world of `fixture.ts` with invitations: every message the feature sends is
 * kept (`mails`), Alice's and Bob's addresses are verified unless a test says otherwise, and the
 * helpers post to the invitation routes as a script (JSON) or as the link's page (a form) does.
 */
import { expect } from 'vitest'
import { organizations, type InvitationMail, type InvitationOptions } from '../../core/organizations.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client } from '../fixtures/http.js'
import { CUSTOM_ROLES, USERS, setActive, twoOrganizations } from './fixture.js'

/** A world whose invitations are kept in `mails`, with both addresses verified (unless `verified: false`). */
export async function invitationWorld(
  options: { invitations?: InvitationOptions; verified?: boolean; strategy?: 'jwt' | 'database'; overrides?: Partial<AuthConfig> } = {},
) {
  const mails: InvitationMail[] = []
  const send = options.invitations?.send ?? ((mail: InvitationMail) => void mails.push(mail))
  const world = await twoOrganizations(options.strategy ?? 'jwt', {
    organizations: organizations({ roles: CUSTOM_ROLES, invitations: { ...options.invitations, send } }),
    // One store object, so that a second configuration over this world (another instance) shares it.
    store: memoryAuthStore(),
    ...options.overrides,
  })
  if (options.verified !== false) {
    for (const user of Object.values(USERS)) await world.adapter.updateUser({ id: user.id, emailVerified: new Date('2026-01-02T00:00:00Z') })
  }
  return { ...world, mails }
}

/** Posts JSON `body` to `POST /organization/<segment>` with the client's CSRF token (unless `csrf: false`). */
export async function postJson(client: Client, segment: string, body: Record<string, unknown>, options: { csrf?: boolean } = {}) {
  const csrfToken = options.csrf === false ? undefined : await client.csrfToken()
  const response = await client.send({ method: 'POST', path: `/organization/${segment}`, json: { ...body, ...(csrfToken ? { csrfToken } : {}) } })
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> | null }
}

/** Makes `organizationId` the client's active organisation. */
export async function activate(client: Client, organizationId: string) {
  expect((await setActive(client, { organizationId })).response.status).toBe(200)
}

/** Invites `email` to `role` as `client` (in their active organisation): the answer. */
export const invite = (client: Client, email: string, role = 'member', extra: Record<string, unknown> = {}) =>
  postJson(client, 'invite', { email, role, ...extra })

/** The id and token of the link in `mail`. */
export function linkOf(mail: InvitationMail): { id: string; token: string; url: URL } {
  const url = new URL(mail.url)
  return { id: url.searchParams.get('id')!, token: url.searchParams.get('token')!, url }
}

/** Answers an invitation as a script would (JSON). */
export const answer = (client: Client, action: 'accept' | 'decline', link: { id: string; token: string }) =>
  postJson(client, 'invitation', { action, id: link.id, token: link.token })

/** Answers an invitation from the link's page (a form post, as its buttons do). */
export async function answerFromPage(client: Client, action: 'accept' | 'decline', link: { id: string; token: string }) {
  const csrfToken = await client.csrfToken()
  return client.send({ method: 'POST', path: '/organization/invitation', body: { action, id: link.id, token: link.token, csrfToken } })
}

/** Revokes an invitation by its id. */
export const revoke = (client: Client, id: string, extra: Record<string, unknown> = {}) => postJson(client, 'invitation', { action: 'revoke', id, ...extra })
