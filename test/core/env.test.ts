import { createActionURL as authjsCreateActionURL } from '@auth/core'
import { describe, expect, it, vi } from 'vitest'
import { createActionURL, setEnvDefaults } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'

const oauth = () => ({ id: 'my-idp', name: 'IdP', type: 'oauth' }) as unknown as AuthConfig['providers'][number]

describe('setEnvDefaults', () => {
  it('orders rotated secrets newest first: [S3, S2, S1, S]', () => {
    const config: AuthConfig = { providers: [] }
    setEnvDefaults({ AUTH_SECRET: '0', AUTH_SECRET_1: '1', AUTH_SECRET_2: '2', AUTH_SECRET_3: '3' }, config)
    expect(config.secret).toEqual(['3', '2', '1', '0'])
  })

  it('keeps a configured secret', () => {
    const config: AuthConfig = { providers: [], secret: 'configured' }
    setEnvDefaults({ AUTH_SECRET: 'env' }, config)
    expect(config.secret).toBe('configured')
  })

  it('sets the secret to [] when the environment has none, as Auth.js, so validation reports MissingSecret', () => {
    const config: AuthConfig = { providers: [] }
    setEnvDefaults({}, config)
    expect(config.secret).toEqual([])
  })

  it('takes basePath from the path of AUTH_URL, else /auth', () => {
    const fromUrl: AuthConfig = { providers: [] }
    setEnvDefaults({ AUTH_URL: 'https://example.com/api/auth' }, fromUrl)
    expect(fromUrl.basePath).toBe('/api/auth')
    const byDefault: AuthConfig = { providers: [] }
    setEnvDefaults({}, byDefault)
    expect(byDefault.basePath).toBe('/auth')
  })

  it('warns when both AUTH_URL and basePath are set, unless suppressed', () => {
    const warn = vi.fn()
    const config: AuthConfig = { providers: [], basePath: '/custom', logger: { warn } }
    setEnvDefaults({ AUTH_URL: 'https://example.com/api/auth' }, config)
    expect(warn).toHaveBeenCalledWith('env-url-basepath-redundant')
    expect(config.basePath).toBe('/custom')
    warn.mockClear()
    setEnvDefaults({ AUTH_URL: 'https://example.com/api/auth' }, config, true)
    expect(warn).not.toHaveBeenCalled()
  })

  it('infers trustHost like Auth.js, first defined value wins', () => {
    const cases: [Record<string, string>, boolean][] = [
      [{}, true],
      [{ NODE_ENV: 'production' }, false],
      [{ NODE_ENV: 'production', AUTH_TRUST_HOST: 'false' }, true],
      [{ NODE_ENV: 'production', AUTH_URL: 'https://x.test' }, true],
      [{ NODE_ENV: 'production', VERCEL: '1' }, true],
    ]
    for (const [env, expected] of cases) {
      const config: AuthConfig = { providers: [] }
      setEnvDefaults(env, config)
      expect(config.trustHost, JSON.stringify(env)).toBe(expected)
    }
    const explicit: AuthConfig = { providers: [], trustHost: false }
    setEnvDefaults({}, explicit)
    expect(explicit.trustHost).toBe(false)
  })

  it('takes the redirect proxy from AUTH_REDIRECT_PROXY_URL', () => {
    const config: AuthConfig = { providers: [] }
    setEnvDefaults({ AUTH_REDIRECT_PROXY_URL: 'https://proxy.test/auth' }, config)
    expect(config.redirectProxyUrl).toBe('https://proxy.test/auth')
  })

  it('fills OAuth client credentials from AUTH_<ID>_ID, _SECRET and _ISSUER', () => {
    const config: AuthConfig = { providers: [oauth()] }
    setEnvDefaults({ AUTH_MY_IDP_ID: 'id', AUTH_MY_IDP_SECRET: 'secret', AUTH_MY_IDP_ISSUER: 'https://idp.test' }, config)
    expect(config.providers[0]).toMatchObject({ clientId: 'id', clientSecret: 'secret', issuer: 'https://idp.test' })
  })

  it('calls provider factories with the environment credentials', () => {
    const factory = vi.fn((options: Record<string, unknown>) => ({ id: 'gh', name: 'GH', type: 'oauth', ...options }))
    const config: AuthConfig = { providers: [factory as never] }
    setEnvDefaults({ AUTH_GH_ID: 'id' }, config)
    expect(factory).toHaveBeenLastCalledWith({ clientId: 'id', clientSecret: undefined, issuer: undefined, apiKey: undefined })
    expect(config.providers[0]).toMatchObject({ clientId: 'id' })
  })

  it('fills an email provider API key from AUTH_<ID>_KEY', () => {
    const config: AuthConfig = { providers: [{ id: 'resend', name: 'Resend', type: 'email' } as never] }
    setEnvDefaults({ AUTH_RESEND_KEY: 'key' }, config)
    expect(config.providers[0]).toMatchObject({ apiKey: 'key' })
  })
})

describe('createActionURL', () => {
  const cases: [string, Record<string, string>, Record<string, string>, string | undefined][] = [
    ['host header', { host: 'example.com' }, {}, '/auth'],
    ['forwarded host and proto', { host: 'internal:3000', 'x-forwarded-host': 'example.com', 'x-forwarded-proto': 'https' }, {}, '/auth'],
    ['proto with colon', { host: 'example.com', 'x-forwarded-proto': 'http:' }, {}, '/auth'],
    ['AUTH_URL without path', { host: 'ignored' }, { AUTH_URL: 'https://example.com' }, '/auth'],
    ['AUTH_URL with path and no basePath', {}, { AUTH_URL: 'https://example.com/api/auth' }, undefined],
    ['AUTH_URL with trailing slash', {}, { AUTH_URL: 'http://localhost:3000/my-app/api/auth/' }, '/my-app/api/auth'],
    ['NEXTAUTH_URL fallback', {}, { NEXTAUTH_URL: 'https://legacy.example.com' }, '/api/auth'],
    ['basePath with trailing slash', { host: 'example.com' }, {}, '/api/auth/'],
    ['root basePath', { host: 'example.com' }, {}, '/'],
  ]

  it.each(cases)('builds the same URL as @auth/core (%s)', (_name, headers, env, basePath) => {
    for (const action of ['signin', 'session'] as const) {
      const config = { basePath, logger: { warn: vi.fn() } }
      const ours = createActionURL(action, 'https', new Headers(headers), env, config)
      const theirs = authjsCreateActionURL(action, 'https', new Headers(headers), env, {
        basePath,
        logger: { warn: vi.fn(), error: vi.fn(), debug: vi.fn() },
      })
      expect(ours.href).toBe(theirs.href)
    }
  })

  it('warns when AUTH_URL has a path other than basePath, and basePath wins', () => {
    const warn = vi.fn()
    const url = createActionURL('signout', 'https', new Headers(), { AUTH_URL: 'https://x.com/api/auth' }, {
      basePath: '/auth',
      logger: { warn },
    })
    expect(url.href).toBe('https://x.com/auth/signout')
    expect(warn).toHaveBeenCalledWith('env-url-basepath-mismatch')
  })
})
