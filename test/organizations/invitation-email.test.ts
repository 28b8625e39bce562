/**
 * Invitations with the e-mail sign-in, through `Auth`: without a sender of its own, the invitation
 * goes out through the e-mail provider's `sendVerificationRequest`, and the e-mail flow's proof of
 * the address is what lets its owner accept. Bob (signed in by e-mail) owns Globex and invites
 * Alice's address; Bob holding the link is refused, Alice signed in by e-mail accepts.
 */
import { describe, expect, it } from 'vitest'
import { organizations } from '../../core/organizations.js'
import { emailConfig, EmailClient, lastLink } from '../email/helpers.js'
import { activate, answer, invite, linkOf } from './invitation-fixture.js'

const GLOBEX = 'org-globex'
const ALICE = 'alice@example.test'
const BOB = 'bob@example.test'

/** A browser signed in by an e-mail link to `address`. */
async function signedInByEmail(config: ConstructorParameters<typeof EmailClient>[0], outbox: { url: string }[], address: string) {
  const client = new EmailClient(config)
  expect((await client.requestLink(address)).status).toBe(302)
  expect((await client.confirm(lastLink(outbox as never))).status).toBe(302)
  return client
}

describe('invitations with the e-mail sign-in', () => {
  it('are sent by the e-mail provider, and accepted only by the address the e-mail sign-in proved', async () => {
    const { config, outbox, adapter } = emailConfig({ overrides: { organizations: organizations() } })
    const bob = await signedInByEmail(config, outbox, BOB)
    const bobUser = (await adapter.getUserByEmail(BOB))!
    await adapter.createOrganization({ id: GLOBEX, slug: 'globex', name: 'Globex', verifiedDomains: [], metadata: {}, createdAt: new Date() })
    await adapter.createMembership({ organizationId: GLOBEX, userId: bobUser.id, role: 'owner', status: 'active', createdAt: new Date() })
    await activate(bob, GLOBEX)
    expect((await invite(bob, ALICE)).status).toBe(201)
    const message = outbox.at(-1)!
    expect(message.identifier).toBe(ALICE)
    const link = linkOf({ url: message.url } as never)
    expect(link.url.pathname).toBe('/auth/organization/invitation')

    expect(await answer(bob, 'accept', link)).toMatchObject({ status: 403, body: { error: 'WrongAddress' } })
    const alice = await signedInByEmail(config, outbox, ALICE)
    const aliceUser = (await adapter.getUserByEmail(ALICE))!
    expect(aliceUser.emailVerified).not.toBeNull()
    expect(await answer(alice, 'accept', link)).toMatchObject({ status: 200, body: { membership: { userId: aliceUser.id, role: 'member', status: 'active' } } })
    expect(await adapter.getMembership(GLOBEX, aliceUser.id)).toMatchObject({ status: 'active' })
  })
})
