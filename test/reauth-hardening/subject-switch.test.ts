/**
 * A `jwt` callback that merges `update()` data lets the client write `sub`: Mallory, freshly signed
 * in with her own password, sends `update({ sub: Alice's id, … })`. The token now names Alice; the
 * proofs Mallory made must not make it a fresh session of Alice's. Checked through a built-in
 * sensitive action over HTTP and through the server-side check (`requireRecentAuth`).
 */
import { describe, expect, it } from 'vitest'
import { requireRecentAuth } from '../../core/recent-auth.js'
import { ALICE, Client, ORIGIN } from '../fixtures/http.js'
import { isFresh, MALLORY, mergingApp, post, update } from './fixture.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'

async function mallorySignedIn() {
  const app = mergingApp()
  const client = new Client(app.config)
  const signIn = await post(client, '/callback/credentials', { username: 'mallory', password: 'mallory-pw' })
  expect(signIn.status).toBe(302)
  expect(((await client.session()).body as { user?: { email?: string } }).user?.email).toBe(MALLORY.email)
  return { ...app, client }
}

describe("a token switched to another subject by the jwt callback", () => {
  it('is fresh for its own subject before the switch (the check can pass)', async () => {
    const { client } = await mallorySignedIn()
    expect(await isFresh(client)).toBe(true)
  })

  it("carries none of the previous subject's proofs: the sensitive action asks again", async () => {
    const { client, config } = await mallorySignedIn()
    await update(client, { sub: ALICE.id, email: ALICE.email, name: ALICE.name })
    expect(((await client.session()).body as { user?: { email?: string } }).user?.email).toBe(ALICE.email)
    expect(await isFresh(client)).toBe(false)
    expect(config.logger.warn).toHaveBeenCalledWith('jwt-callback-changed-subject')
  })

  it('is not fresh for the server-side check either', async () => {
    const { client, config } = await mallorySignedIn()
    await update(client, { sub: ALICE.id, email: ALICE.email })
    const request = new Request(`${ORIGIN}/account/delete`, {
      headers: { cookie: `${SESSION_COOKIE}=${client.jar.get(SESSION_COOKIE)}`, accept: 'application/json' },
    })
    const verdict = await requireRecentAuth(request, config, { maxAge: 600 })
    expect(verdict).toBeInstanceOf(Response)
    expect((verdict as Response).status).toBe(401)
  })

  it('keeps the proofs when update() changes only other claims', async () => {
    const { client } = await mallorySignedIn()
    await update(client, { name: 'Mallory M.' })
    expect(await isFresh(client)).toBe(true)
  })
})
