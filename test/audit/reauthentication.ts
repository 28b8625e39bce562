/**
 * A completed re-authentication through `Auth`, for the audit tests: alice signs in, her password's
 * proof is made an hour old (the session token re-sealed with an old `fva`, as the clock would
 * leave it), an application's own route sends her to re-authenticate, and she proves the password.
 *
 * @module
 */
import { expect } from 'vitest'
import { decode, encode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, SECRET } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const HTML = { accept: 'text/html' }

/** Re-seals the JWT session of `client` as if its password had been proven an hour ago. */
export async function ageProof(client: Client): Promise<void> {
  const token = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
  const hourAgo = Math.floor(Date.now() / 1000) - 3600
  const aged = await encode({ token: { ...token, fva: { pwd: hourAgo } }, secret: SECRET, salt: SESSION_COOKIE })
  client.jar.cookies.set(SESSION_COOKIE, aged)
}

/**
 * Signs alice in with `config` (JWT sessions), ages her proof, and re-authenticates her with the
 * password for an application's route (`/settings`); returns the client.
 */
export async function reauthenticateAlice(config: AuthConfig): Promise<Client> {
  const client = new Client(config)
  await client.signIn({ username: 'alice', password: 'wonderland' })
  await ageProof(client)
  const asked = await client.send({ path: `/reauthenticate?callbackUrl=${encodeURIComponent('/settings')}`, headers: HTML })
  expect(asked.headers.get('location')).toMatch(/\/auth\/step\/reauthenticate$/)
  const csrfToken = await client.csrfToken()
  const proven = await client.send({
    path: '/step/reauthenticate',
    body: { event: 'reauth.password', username: 'alice', password: 'wonderland', csrfToken },
    headers: HTML,
  })
  expect(proven.status).toBe(302)
  expect(proven.headers.get('location')).toMatch(/\/settings$/)
  return client
}
