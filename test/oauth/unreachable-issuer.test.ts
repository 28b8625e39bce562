/**
 * An OIDC issuer that cannot be reached fails the sign-in where it happens, before the user leaves
 * for the provider: logged as OAuthSignInError with the issuer's URL (not an empty
 * CallbackRouteError), and answered as Auth.js answers an error that is not its own: the error
 * page with `Configuration`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { OAuthSignInError } from '../../core/errors.js'
import { resolveOAuthProvider } from '../../core/oauth/provider.js'
import { authorizationServer } from '../../core/oauth/server.js'
import OIDC from '../../providers/oidc.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'
import { freePort } from '../fixtures/postgres.js'

let issuer: string

beforeEach(async () => {
  // A port nothing listens on: the connection is refused.
  issuer = `http://127.0.0.1:${await freePort()}/`
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('an unreachable issuer', () => {
  it('fails discovery with an error naming the issuer and the reason', async () => {
    const provider = resolveOAuthProvider({ id: 'corp', name: 'Corp', type: 'oidc', issuer, clientId: 'corp-id' }, undefined)
    await expect(authorizationServer(provider)).rejects.toThrow(
      new RegExp(`^The issuer ${issuer.replace(/[.]/g, '\\.')} of provider "corp" could not be reached for its discovery document: fetch failed \\(ECONNREFUSED\\)$`),
    )
  })

  it('fails the sign-in at its start: OAuthSignInError with the URL logged, the error page with Configuration', async () => {
    const config = testConfig({ providers: [OIDC({ id: 'corp', name: 'Corp', issuer, clientId: 'corp-id', clientSecret: 'corp-secret' })] })
    const client = new Client(config)
    const start = await client.send({ path: '/signin/corp', body: { csrfToken: await client.csrfToken() } })
    expect(start.status).toBe(302)
    expect(start.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(config.logger.error).toHaveBeenCalledTimes(1)
    const [logged] = config.logger.error.mock.calls[0]!
    expect(logged).toBeInstanceOf(OAuthSignInError)
    expect(logged.type).toBe('OAuthSignInError')
    expect(logged.message).toBe(
      `The sign-in with "corp" could not start: The issuer ${issuer} of provider "corp" could not be reached for its discovery document: fetch failed (ECONNREFUSED)`,
    )
  })

  it('prints a line that names the issuer with the default logger', async () => {
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')))
    const config = { ...testConfig({ providers: [OIDC({ id: 'corp', issuer, clientId: 'corp-id' })] }), logger: undefined }
    const client = new Client(config)
    await client.send({ path: '/signin/corp', body: { csrfToken: await client.csrfToken() } })
    expect(lines[0]).toBe(
      `[auth][error] OAuthSignInError: The sign-in with "corp" could not start: The issuer ${issuer} of provider "corp" could not be reached for its discovery document: fetch failed (ECONNREFUSED)`,
    )
  })
})
