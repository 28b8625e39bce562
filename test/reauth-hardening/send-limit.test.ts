/**
 * Issue 48, item 5, from the attacker's side over HTTP: the holder of a (stale) cookie starts
 * re-authentications and presses "send a code" again and again. The e-mail provider's per-address
 * limit (5 per 15 minutes by default) counts every message to the address, whatever the flow
 * sends it: re-authentication codes and sign-in links together.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ALICE, Client } from '../fixtures/http.js'
import { HTML, later, mergingApp, post } from './fixture.js'

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

async function staleAlice(app: ReturnType<typeof mergingApp>) {
  const client = new Client(app.config)
  await client.signIn({ username: 'alice', password: 'wonderland' })
  later(11)
  return client
}

describe("the per-address limit counts every message we send", () => {
  it('lets 10 re-authentications × 4 sends in a minute put at most 5 messages into the mailbox', async () => {
    const app = mergingApp()
    const thief = await staleAlice(app)
    for (let round = 0; round < 10; round++) {
      await post(thief, '/two-factor', {})
      for (let send = 0; send < 4; send++) await post(thief, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
      vi.setSystemTime(Date.now() + 5_000)
    }
    expect(app.sent.length).toBe(5)
    expect(app.sent.every((mail) => mail.to === ALICE.email)).toBe(true)
    expect(app.config.logger.warn).toHaveBeenCalledWith('email-send-throttled')
    // The page says why no code came.
    const page = await (await thief.send({ path: '/step/reauthenticate', headers: HTML })).text()
    expect(page).toContain('Too many e-mails')
  })

  it('counts sign-in e-mails and re-authentication codes to one address together', async () => {
    const app = mergingApp()
    const stranger = new Client(app.config)
    for (let i = 0; i < 3; i++) {
      await post(stranger, '/signin/email', { email: ALICE.email })
    }
    expect(app.sent.length).toBe(3)
    const thief = await staleAlice(app)
    await post(thief, '/two-factor', {})
    for (let send = 0; send < 3; send++) await post(thief, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
    expect(app.sent.length).toBe(5)
    // And the other way round: the sign-in form is refused now too.
    await post(stranger, '/signin/email', { email: ALICE.email })
    expect(app.sent.length).toBe(5)
  })

  it('starts counting again after the window', async () => {
    const app = mergingApp()
    const owner = await staleAlice(app)
    await post(owner, '/two-factor', {})
    for (let send = 0; send < 3; send++) await post(owner, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
    await post(owner, '/two-factor', {})
    for (let send = 0; send < 3; send++) await post(owner, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
    expect(app.sent.length).toBe(5)
    vi.setSystemTime(Date.now() + 16 * 60_000)
    await post(owner, '/two-factor', {})
    await post(owner, '/step/reauthenticate', { event: 'reauth.sendEmailCode' })
    expect(app.sent.length).toBe(6)
  })
})
