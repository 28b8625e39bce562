import { describe, expect, it, vi } from 'vitest'
import { encode } from '../../core/jwt.js'
import { ALICE, Client, ORIGIN, SECRET, setCookies, testConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'

describe('POST /signout', () => {
  it('clears the session, fires events.signOut with the token, and redirects to the callback URL', async () => {
    const signOut = vi.fn()
    const client = new Client(testConfig({ events: { signOut } }))
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const response = await client.signOut({ callbackUrl: '/goodbye' })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/goodbye`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(signOut).toHaveBeenCalledWith({ token: expect.objectContaining({ sub: ALICE.id }) })
    expect((await client.session()).body).toBeNull()
  })

  it('deletes every chunk of a chunked session cookie', async () => {
    const client = new Client(testConfig())
    const token = await encode({
      token: { sub: ALICE.id, groups: 'g'.repeat(6000) },
      secret: SECRET,
      salt: SESSION_COOKIE,
    })
    client.jar.cookies.set(`${SESSION_COOKIE}.0`, token.slice(0, 3936))
    client.jar.cookies.set(`${SESSION_COOKIE}.1`, token.slice(3936))
    const response = await client.signOut()
    const deleted = setCookies(response).filter((c) => c.attributes['max-age'] === '0').map((c) => c.name)
    expect(deleted).toEqual(expect.arrayContaining([`${SESSION_COOKIE}.0`, `${SESSION_COOKIE}.1`]))
    expect([...client.jar.cookies.keys()].some((n) => n.startsWith(SESSION_COOKIE))).toBe(false)
  })

  it('redirects without touching cookies when there is no session', async () => {
    const signOut = vi.fn()
    const client = new Client(testConfig({ events: { signOut } }))
    const response = await client.signOut()
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(setCookies(response).some((c) => c.name.startsWith(SESSION_COOKIE))).toBe(false)
    expect(signOut).not.toHaveBeenCalled()
  })

  it('still clears an undecodable session cookie, logging SignOutError', async () => {
    const config = testConfig()
    const client = new Client(config)
    client.jar.cookies.set(SESSION_COOKIE, 'garbage')
    await client.signOut()
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(config.logger.error.mock.calls.map(([e]) => e.type)).toContain('SignOutError')
  })

  it('refuses to sign out without the CSRF token, keeping the session', async () => {
    const client = new Client(testConfig())
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const response = await client.send({ path: '/signout', body: {} })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(client.jar.get(SESSION_COOKIE)).toMatch(/^eyJ/)
  })

  it('does not sign out to another origin', async () => {
    const client = new Client(testConfig())
    const response = await client.signOut({ callbackUrl: 'https://evil.example/' })
    expect(response.headers.get('location')).toBe(ORIGIN)
  })
})
