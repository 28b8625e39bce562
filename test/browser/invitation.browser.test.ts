/**
 * An organisation invitation as people meet it, in headless Chromium, two users in two browsers:
 * Bob, owner of Globex, invites Alice's address; Alice opens the e-mailed link signed out, is sent
 * to sign in and back, and clicks "Accept the invitation". Bob, opening the same link in his own
 * browser, is refused, and a page load alone accepts nothing. Only clicks, typing and page loads,
 * besides Bob's invitation posted from his page as an application's script would.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { organizations, type InvitationMail } from '../../core/organizations.js'
import Credentials from '../../providers/credentials.js'
import { launchChromium } from '../fixtures/chromium.js'
import { SECRET, spyLogger } from '../fixtures/http.js'
import { signInWithCredentials, startPageFlowsApp, type PageFlowsApp } from './page-flows-app.js'

const USERS = {
  alice: { id: 'u-alice', name: 'alice', email: 'alice@example.test' },
  bob: { id: 'u-bob', name: 'bob', email: 'bob@example.test' },
} as const
const GLOBEX = 'org-globex'

let app: PageFlowsApp
let browser: Browser
const adapter = MemoryAdapter(createMemoryStore())
const mails: InvitationMail[] = []

beforeAll(async () => {
  for (const user of Object.values(USERS)) await adapter.createUser({ ...user, emailVerified: new Date('2026-01-02T00:00:00Z') })
  await adapter.createOrganization({ id: GLOBEX, slug: 'globex', name: 'Globex', verifiedDomains: [], metadata: {}, createdAt: new Date() })
  await adapter.createMembership({ organizationId: GLOBEX, userId: USERS.bob.id, role: 'owner', status: 'active', createdAt: new Date() })
  app = await startPageFlowsApp(() => ({
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    adapter,
    session: { strategy: 'jwt' },
    providers: [
      Credentials({
        credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
        authorize: ({ username, password }) =>
          password === 'wonderland' && (username === 'alice' || username === 'bob') ? { ...USERS[username as 'alice' | 'bob'] } : null,
      }),
    ],
    organizations: organizations({ invitations: { send: (mail) => void mails.push(mail) } }),
  }))
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
})

/** Posts JSON from the page, with the CSRF token, as the application's own script would. */
function postFromPage(page: Page, path: string, body: Record<string, unknown>) {
  return page.evaluate(
    async ({ path, body }) => {
      const { csrfToken } = (await (await fetch('/auth/csrf')).json()) as { csrfToken: string }
      const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, csrfToken }) })
      return { status: response.status, body: (await response.json()) as unknown }
    },
    { path, body },
  )
}

describe('an organisation invitation in two browsers', () => {
  it('is accepted by the invited user after signing in, and by nobody else', async () => {
    const bobs = await browser.newContext()
    bobs.setDefaultTimeout(10_000)
    const bob = await bobs.newPage()
    await signInWithCredentials(bob, app, { username: 'bob' })
    expect((await postFromPage(bob, '/auth/organization/active', { organizationId: GLOBEX })).status).toBe(200)
    expect((await postFromPage(bob, '/auth/organization/invite', { email: USERS.alice.email, role: 'member' })).status).toBe(201)
    const link = mails.at(-1)!.url
    const id = new URL(link).searchParams.get('id')!

    // Bob has the link, but it is not his address: the page loads, and his click is refused.
    await bob.goto(link)
    await Promise.all([bob.waitForURL(/\/auth\/error\?error=AccessDenied/), bob.getByRole('button', { name: 'Accept the invitation' }).click()])
    expect((await adapter.getInvitation(id))!.status).toBe('sent')

    const alices = await browser.newContext()
    alices.setDefaultTimeout(10_000)
    const alice = await alices.newPage()
    // Signed out, the link sends her to sign in, and back to it.
    await alice.goto(link)
    await alice.waitForURL(/\/auth\/signin\?/)
    await signInWithCredentials(alice, app, { open: false, username: 'alice', landing: link })
    await alice.getByRole('heading', { name: 'Join the organisation' }).waitFor()
    // Loading the page again (a scanner, a preview) accepts nothing.
    await alice.reload()
    expect(await adapter.getMembership(GLOBEX, USERS.alice.id)).toBeNull()
    await Promise.all([alice.waitForURL(`${app.origin}/`), alice.getByRole('button', { name: 'Accept the invitation' }).click()])
    expect(await adapter.getMembership(GLOBEX, USERS.alice.id)).toMatchObject({ role: 'member', status: 'active' })
    expect((await adapter.getInvitation(id))!.status).toBe('accepted')
    expect((await postFromPage(alice, '/auth/organization/active', { organizationId: GLOBEX })).status).toBe(200)

    // The link is spent: clicking it again is refused.
    await alice.goto(link)
    await Promise.all([alice.waitForURL(/\/auth\/error\?error=Verification/), alice.getByRole('button', { name: 'Accept the invitation' }).click()])
    await bobs.close()
    await alices.close()
  })
})
