/**
 * README `oauth.ts`: the three providers are configured from the environment, listed, and a GitHub
 * sign-in leaves for GitHub's authorization endpoint with the configured client id (nothing is
 * fetched: GitHub's endpoints are fixed).
 */
import { describe, expect, it } from 'vitest'
import type { AuthConfig } from '../../core/types.js'
import { Client, SECRET } from '../fixtures/http.js'
import { loadSnippet } from './snippet.js'

const { config } = await loadSnippet<{ config: AuthConfig }>('oauth.ts', {
  AUTH_SECRET: SECRET,
  AUTH_GITHUB_ID: 'gh-client',
  AUTH_GITHUB_SECRET: 'gh-secret',
  AUTH_GOOGLE_ID: 'google-client',
  AUTH_GOOGLE_SECRET: 'google-secret',
  CORP_ID: 'corp-client',
  CORP_SECRET: 'corp-secret',
})

describe('README oauth.ts', () => {
  it('lists GitHub, Google and the corporate OIDC provider', async () => {
    const { body } = await new Client(config).send({ path: '/providers' }).then(async (r) => ({ body: await r.json() }))
    expect(Object.keys(body as object)).toEqual(['github', 'google', 'corp'])
  })

  it('starts a GitHub sign-in with the client id from the environment', async () => {
    const client = new Client(config)
    const csrfToken = await client.csrfToken()
    const start = await client.send({ path: '/signin/github', body: { csrfToken } })
    expect(start.status).toBe(302)
    const location = new URL(start.headers.get('location')!)
    expect(`${location.origin}${location.pathname}`).toBe('https://github.com/login/oauth/authorize')
    expect(location.searchParams.get('client_id')).toBe('gh-client')
  })
})
