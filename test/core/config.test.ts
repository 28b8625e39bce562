import { describe, expect, it } from 'vitest'
import { Auth, assertConfig } from '../../core/index.js'
import { ConfigError } from '../../core/errors.js'
import type { AuthConfig } from '../../core/types.js'
import Email from '../../providers/email.js'
import Passkey from '../../providers/passkey.js'
import { authRequest, credentialsProvider, ORIGIN, SECRET, spyLogger, testConfig } from '../fixtures/http.js'

const CONFIG_MESSAGE =
  'There was a problem with the server configuration. Check the server logs for more information.'

async function expectConfigurationFailure(config: unknown, path = '/auth/session') {
  const response = await Auth(authRequest({ path }), config as Omit<AuthConfig, 'raw'>)
  expect(response.status).toBe(500)
  expect(await response.json()).toEqual({ message: CONFIG_MESSAGE })
}

describe('misconfiguration', () => {
  it('answers API requests with 500 and the Auth.js message when the secret is missing, logging MissingSecret', async () => {
    const logger = spyLogger()
    await expectConfigurationFailure({ trustHost: true, providers: [], logger })
    expect(logger.error).toHaveBeenCalledTimes(1)
    expect(logger.error.mock.calls[0]![0]).toMatchObject({
      type: 'MissingSecret',
      message: 'Please define a `secret`',
    })
  })

  it('refuses a secret shorter than 32 characters, naming the option', async () => {
    const logger = spyLogger()
    await expectConfigurationFailure({ secret: 'short', trustHost: true, providers: [], logger })
    const error = logger.error.mock.calls[0]![0]
    expect(error).toBeInstanceOf(ConfigError)
    expect(error.message).toMatch(/^config\.secret: .*at least 32 characters long; to keep today's sessions, .*\(generate one with `npx authchart secret`\)$/)
  })

  it('refuses an untrusted host, logging UntrustedHost with the URL', async () => {
    const logger = spyLogger()
    await expectConfigurationFailure({ secret: SECRET, providers: [], logger })
    expect(logger.error.mock.calls[0]![0]).toMatchObject({
      type: 'UntrustedHost',
      message: `Host must be trusted. URL was: ${ORIGIN}/auth/session`,
    })
  })

  it('refuses a misspelt option instead of ignoring it', async () => {
    const logger = spyLogger()
    await expectConfigurationFailure({ ...testConfig(), sesion: { maxAge: 60 }, logger } as never)
    expect(logger.error.mock.calls[0]![0].message).toBe('config.sesion: unknown option')
  })

  it('refuses a credentials provider without authorize (MissingAuthorize)', async () => {
    const logger = spyLogger()
    const provider = { id: 'pin', name: 'PIN', type: 'credentials', credentials: {} }
    await expectConfigurationFailure({ ...testConfig({ providers: [provider as never] }), logger })
    expect(logger.error.mock.calls[0]![0]).toMatchObject({ type: 'MissingAuthorize' })
  })

  it('refuses two providers with the same id', async () => {
    const logger = spyLogger()
    const config = testConfig({ providers: [credentialsProvider(), credentialsProvider()] })
    await expectConfigurationFailure({ ...config, logger })
    expect(logger.error.mock.calls[0]![0].message).toMatch(/already configured/)
  })

  it('refuses the database strategy without an adapter (MissingAdapter)', async () => {
    const logger = spyLogger()
    await expectConfigurationFailure({ ...testConfig({ session: { strategy: 'database' } }), logger })
    expect(logger.error.mock.calls[0]![0]).toMatchObject({ type: 'MissingAdapter' })
    expect(logger.error.mock.calls[0]![0].message).toMatch(/^Database session requires an adapter\. /)
  })

  it.each([
    ['e-mail sign-in', 'Email login', { providers: [Email({ sendVerificationRequest: () => {} })] }],
    ['passkeys', 'WebAuthn', { providers: [Passkey()], experimental: { enableWebAuthn: true } }],
  ])('refuses %s without an adapter, saying how to add one (memory to start, PostgreSQL in production)', async (_case, what, overrides) => {
    const logger = spyLogger()
    const config = { ...testConfig(overrides as Partial<AuthConfig>), logger }
    await expectConfigurationFailure(config)
    const error = logger.error.mock.calls[0]![0]
    expect(error.type).toBe('MissingAdapter')
    expect(error.message).toBe(
      `${what} requires an adapter. To start, \`adapter: MemoryAdapter()\` from 'authchart/adapters/memory' ` +
        "(in memory: lost on restart); in production, `PostgresAdapter(pool)` from 'authchart/adapters/postgres' or any Auth.js adapter.",
    )
    // Integrations resolve the config at boot and throw: the message alone must say it.
    expect(() => assertConfig({ ...config, logger: undefined })).toThrow(/MemoryAdapter\(\)` from 'authchart\/adapters\/memory'/)
  })

  it('renders the Configuration error page (500) for page requests', async () => {
    const response = await Auth(authRequest({ path: '/auth/signin' }), {
      providers: [],
      trustHost: true,
      logger: spyLogger(),
    })
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toBe('text/html')
    expect(await response.text()).toContain('There is a problem with the server configuration.')
  })

  it('redirects page requests to a custom error page', async () => {
    const response = await Auth(authRequest({ path: '/auth/signin' }), {
      providers: [],
      trustHost: true,
      logger: spyLogger(),
      pages: { error: '/oops' },
    })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/oops?error=Configuration`)
  })

  it('renders the built-in page instead of looping when the custom error page needs a session', async () => {
    const logger = spyLogger()
    const response = await Auth(
      authRequest({ path: '/auth/signin', query: { callbackUrl: '/oops' } }),
      { providers: [], trustHost: true, logger, pages: { error: '/oops' } },
    )
    expect(response.status).toBe(500)
    expect(logger.error.mock.calls.map(([e]) => e.type)).toContain('ErrorPageLoop')
  })

  it('keeps answering 400 for malformed requests even when the config is broken', async () => {
    const response = await Auth(authRequest({ path: '/auth/nope' }), {
      providers: [],
      logger: spyLogger(),
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toBe('Bad request.')
  })

  it('lets integrations validate at boot with assertConfig', () => {
    expect(() => assertConfig({ providers: [], trustHost: true })).toThrow('Please define a `secret`')
    expect(assertConfig(testConfig()).basePath).toBe('/auth')
  })

  it('freezes the resolved configuration', () => {
    const resolved = assertConfig(testConfig())
    expect(Object.isFrozen(resolved)).toBe(true)
    expect(Object.isFrozen(resolved.session)).toBe(true)
  })

  it('applies the defaults of the spec', () => {
    const resolved = assertConfig(testConfig())
    expect(resolved.session).toMatchObject({ strategy: 'jwt', maxAge: 2_592_000, updateAge: 86_400 })
    expect(resolved.theme).toEqual({ colorScheme: 'auto', logo: '', brandColor: '', buttonText: '' })
    expect(resolved.jwt.maxAge).toBe(2_592_000)
  })
})
