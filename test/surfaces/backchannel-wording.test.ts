/**
 * What the back-channel logout endpoint tells an OpenID Provider's operator when a delivery is
 * wrong (issue #48 item 6): the method, the provider id and the `events` member are each named as
 * the problem, since the operator reads these bodies to fix their side. The claim wording is also
 * checked at the module level in test/oauth/logout-token.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, credentialsProvider, testConfig } from '../fixtures/http.js'
import { appProvider } from '../oauth/helpers.js'

// The issuer is never contacted: every request here is refused before a token is read.
const config = testConfig({
  providers: [appProvider('https://op.example', 'client_secret_basic', 'op'), credentialsProvider()] as never,
}) as Omit<AuthConfig, 'raw'>

const send = (init: Parameters<typeof authRequest>[0]) => Auth(authRequest(init), config)

describe('the back-channel logout endpoint names what is wrong', () => {
  it('answers a GET to an existing provider 405 with Allow: POST, blaming the method', async () => {
    const response = await send({ method: 'GET', path: '/auth/backchannel-logout/op' })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
    const body = (await response.json()) as { error: string; error_description: string }
    expect(body.error).toBe('invalid_request')
    expect(body.error_description).toMatch(/accepts only POST/)
    expect(body.error_description).not.toMatch(/no OpenID Connect provider/)
  })

  it('answers a PUT to an existing provider 405 too', async () => {
    const response = await send({ method: 'PUT', path: '/auth/backchannel-logout/op', body: { logout_token: 'x' } })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
  })

  it('says an unknown provider id is unknown, naming it, whatever the method', async () => {
    for (const method of ['GET', 'POST']) {
      const response = await send({ method, path: '/auth/backchannel-logout/nope', ...(method === 'POST' ? { body: { logout_token: 'x' } } : {}) })
      expect(response.status, method).toBe(400)
      const body = (await response.json()) as { error_description: string }
      expect(body.error_description, method).toMatch(/no OpenID Connect provider with the id "nope"/)
    }
  })

  it('says a provider that exists but is not OpenID Connect is not one', async () => {
    const response = await send({ method: 'POST', path: '/auth/backchannel-logout/credentials', body: { logout_token: 'x' } })
    expect(response.status).toBe(400)
    const body = (await response.json()) as { error_description: string }
    expect(body.error_description).toMatch(/"credentials" is not an OpenID Connect provider/)
  })
})
