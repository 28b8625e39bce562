/**
 * Switching day with a short secret: Auth.js accepts a secret of any length, we refuse one under
 * 32 characters as the secret that encrypts. An app whose users were signed in by `@auth/core`
 * under a 16-character secret switches with `secret: [newLong, oldShort]`: every session still
 * reads, and is sealed again under the new secret, so the old one can go after `session.maxAge`.
 */
import { Auth as AuthjsAuth } from '@auth/core'
import AuthjsCredentials from '@auth/core/providers/credentials'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Auth } from '../../core/index.js'
import { decode, encode } from '../../core/jwt.js'
import { setEnvDefaults } from '../../core/index.js'
import Credentials from '../../providers/credentials.js'
import { CookieJar, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'

const OLD_SHORT = 'sixteen-chars-ok'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const SALT = SESSION_COOKIE

const user = { id: 'u-1', name: 'Alice', email: 'alice@example.com' }

function authorize(credentials: Record<string, unknown>) {
  return credentials.username === 'alice' && credentials.password === 'wonderland' ? user : null
}

async function send(auth: (request: Request, config: never) => Promise<Response>, config: unknown, path: string, jar: CookieJar, form?: Record<string, string>) {
  const headers = new Headers({ cookie: jar.header() })
  if (form) headers.set('content-type', 'application/x-www-form-urlencoded')
  const response = await auth(
    new Request(new URL(path, ORIGIN), { method: form ? 'POST' : 'GET', headers, ...(form ? { body: new URLSearchParams(form).toString() } : {}) }),
    config as never,
  )
  jar.store(response.clone())
  return response
}

/** A user signed in by @auth/core itself, under the short secret. */
async function signedInByAuthjs(): Promise<CookieJar> {
  const jar = new CookieJar()
  const config = { secret: OLD_SHORT, trustHost: true, providers: [AuthjsCredentials({ credentials: { username: {}, password: {} }, authorize })] }
  const { csrfToken } = (await (await send(AuthjsAuth as never, config, '/auth/csrf', jar)).json()) as { csrfToken: string }
  await send(AuthjsAuth as never, config, '/auth/callback/credentials', jar, { username: 'alice', password: 'wonderland', csrfToken })
  expect(jar.get(SESSION_COOKIE)).toBeTruthy()
  return jar
}

function ours(secret: unknown, logger = spyLogger()) {
  return { secret, trustHost: true, logger, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize })] }
}

afterEach(() => vi.unstubAllEnvs())

describe('switching from Auth.js with a short secret', () => {
  it('keeps a session @auth/core sealed under a short secret, and seals it again under the new one', async () => {
    const jar = await signedInByAuthjs()
    const logger = spyLogger()
    const response = await send(Auth as never, ours([SECRET, OLD_SHORT], logger), '/auth/session', jar)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ user: { name: 'Alice', email: 'alice@example.com' } })

    const resealed = jar.get(SESSION_COOKIE)!
    await expect(decode({ token: resealed, secret: SECRET, salt: SALT })).resolves.toMatchObject({ email: 'alice@example.com' })
    await expect(decode({ token: resealed, secret: OLD_SHORT, salt: SALT })).rejects.toThrow()

    // Once every session is renewed, the old secret can go: the renewed cookie reads without it.
    const later = await send(Auth as never, ours(SECRET), '/auth/session', jar)
    expect(await later.json()).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(logger.warn).toHaveBeenCalledWith('short-secret-for-reading')
    expect(logger.error).not.toHaveBeenCalled()
  })

  it('does not let the short secret seal anything new', async () => {
    const jar = new CookieJar()
    const config = ours([SECRET, OLD_SHORT])
    const { csrfToken } = (await (await send(Auth as never, config, '/auth/csrf', jar)).json()) as { csrfToken: string }
    await send(Auth as never, config, '/auth/callback/credentials', jar, { username: 'alice', password: 'wonderland', csrfToken })
    const token = jar.get(SESSION_COOKIE)!
    await expect(decode({ token, secret: SECRET, salt: SALT })).resolves.toMatchObject({ email: 'alice@example.com' })
    await expect(decode({ token, secret: OLD_SHORT, salt: SALT })).rejects.toThrow()
  })

  it('reads the rotation from AUTH_SECRET_1 (new) and AUTH_SECRET (old), as Auth.js orders them', async () => {
    const jar = await signedInByAuthjs()
    vi.stubEnv('AUTH_SECRET', OLD_SHORT)
    vi.stubEnv('AUTH_SECRET_1', SECRET)
    const config = { trustHost: true, logger: spyLogger(), providers: [Credentials({ credentials: { username: {}, password: {} }, authorize })] }
    setEnvDefaults(process.env, config as never)
    const response = await send(Auth as never, config, '/auth/session', jar)
    expect(await response.json()).toMatchObject({ user: { email: 'alice@example.com' } })
  })

  it('refuses a lone short secret with the line that keeps the sessions', async () => {
    const logger = spyLogger()
    const response = await send(Auth as never, ours(OLD_SHORT, logger), '/auth/session', new CookieJar())
    expect(response.status).toBe(500)
    const message = String(logger.error.mock.calls[0]![0].message)
    expect(message).toContain('at least 32 characters long')
    expect(message).toContain('`secret: [process.env.AUTH_SECRET_1, process.env.AUTH_SECRET]`')
    expect(message).not.toContain(OLD_SHORT)
  })

  it('refuses a short first secret: the one that encrypts must be long', async () => {
    const logger = spyLogger()
    await send(Auth as never, ours([OLD_SHORT, SECRET], logger), '/auth/session', new CookieJar())
    const message = String(logger.error.mock.calls[0]![0].message)
    expect(message).toMatch(/^config\.secret: the first secret encrypts, so it must be at least 32 characters long/)
    expect(message).not.toContain(OLD_SHORT)
  })

  it('refuses an empty older secret', async () => {
    const logger = spyLogger()
    await send(Auth as never, ours([SECRET, ''], logger), '/auth/session', new CookieJar())
    expect(String(logger.error.mock.calls[0]![0].message)).toBe('config.secret: secret 1 is empty')
  })

  it('opens a cookie sealed under the older secret by our own encode, and answers it sealed under the first', async () => {
    const token = await encode({ token: { sub: 'u-1', email: 'alice@example.com', name: 'Alice' }, secret: OLD_SHORT, salt: SALT })
    const jar = new CookieJar({ [SESSION_COOKIE]: token })
    const response = await send(Auth as never, ours([SECRET, OLD_SHORT]), '/auth/session', jar)
    expect(await response.json()).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(jar.get(SESSION_COOKIE)).not.toBe(token)
  })
})
