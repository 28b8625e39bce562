/**
 * Every provider preset in the forms Auth.js accepts: passed uncalled (`providers: [GitHub]`, the
 * form Auth.js's docs use with `AUTH_GITHUB_ID` / `AUTH_GITHUB_SECRET`) or called with no options,
 * its credentials (and issuer, where one is needed) coming from the environment through
 * `setEnvDefaults`. Each is listed by `/providers` and starts a sign-in with the environment's
 * client id. OpenID Providers' discovery documents are served by a stubbed global `fetch` (an
 * uncalled factory has no `customFetch`), which refuses every other request.
 */
import { readdirSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { assertConfig, setEnvDefaults } from '../../core/index.js'
import { ConfigError } from '../../core/errors.js'
import type { OAuthConfig } from '../../core/oauth/provider.js'
import type { AuthConfig } from '../../core/types.js'
import Google from '../../providers/google.js'
import GitHub from '../../providers/github.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'
import { CASES } from './catalogue-cases.js'

type Factory = (options?: Record<string, unknown>) => OAuthConfig<Record<string, unknown>>

/** Every OAuth preset file: providers/ without the generic ones, credentials, the e-mail senders, passkeys and passwords. */
const { NOT_OAUTH_PRESETS } = (await import(/* @vite-ignore */ new URL('../../scripts/catalogue.mjs', import.meta.url).href)) as {
  NOT_OAUTH_PRESETS: Set<string>
}
const PRESETS = readdirSync(new URL('../../providers/', import.meta.url))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -'.ts'.length))
  .filter((file) => !NOT_OAUTH_PRESETS.has(file))
  .sort()

async function preset(file: string): Promise<Factory> {
  const url = new URL(`../../providers/${file}.ts`, import.meta.url).href
  return ((await import(/* @vite-ignore */ url)) as { default: Factory }).default
}

/** Discovery documents of the OpenID Providers whose presets name an issuer, and of the test issuers. */
const DISCOVERY: Record<string, Record<string, unknown>> = {
  'https://accounts.google.com': {
    authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
    token_endpoint: 'https://oauth2.googleapis.com/token',
    jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
  },
}
for (const c of CASES) {
  if (!c.discovery) continue
  const issuer = (c.options?.issuer as string | undefined) ?? ((await preset(c.file))() as { issuer?: string; options?: { issuer?: string } })
  const key = typeof issuer === 'string' ? issuer : (issuer.issuer ?? issuer.options!.issuer!)
  DISCOVERY[key] = c.discovery
}

const discoveryFetch: typeof fetch = async (input) => {
  const url = new URL(input instanceof Request ? input.url : input)
  const suffix = '/.well-known/openid-configuration'
  if (url.pathname.endsWith(suffix)) {
    for (const [issuer, document] of Object.entries(DISCOVERY)) {
      const expected = new URL(issuer)
      const path = expected.pathname === '/' ? suffix : `${expected.pathname.replace(/\/$/, '')}${suffix}`
      if (expected.origin === url.origin && path === url.pathname) {
        return Response.json({ issuer, response_types_supported: ['code'], ...document })
      }
    }
  }
  throw new TypeError(`no network in tests: ${url.href}`)
}

beforeEach(() => {
  vi.stubGlobal('fetch', discoveryFetch)
})
afterEach(() => {
  vi.unstubAllGlobals()
})

const envKey = (id: string) => id.toUpperCase().replace(/-/g, '_')

/** The environment of a deployment configuring `file` only through variables. */
function envFor(file: string): Record<string, string> {
  const key = envKey(file)
  const issuer = CASES.find((c) => c.file === file)?.options?.issuer as string | undefined
  return {
    [`AUTH_${key}_ID`]: `env-id-of-${file}`,
    [`AUTH_${key}_SECRET`]: `env-secret-of-${file}`,
    ...(issuer ? { [`AUTH_${key}_ISSUER`]: issuer } : {}),
  }
}

/** Lists the providers and starts a sign-in with `id`; returns the authorization URL. */
async function listAndStart(config: AuthConfig, id: string) {
  const client = new Client(config)
  const listed = (await (await client.send({ path: '/providers' })).json()) as Record<string, { id: string; callbackUrl: string }>
  const csrfToken = await client.csrfToken()
  const start = await client.send({ path: `/signin/${id}`, body: { csrfToken } })
  return { listed, start, location: start.headers.get('location') }
}

describe('a preset passed uncalled, with env credentials', () => {
  it('covers every OAuth preset file', () => {
    expect(PRESETS).toEqual(expect.arrayContaining(['github', 'google', 'twitter', 'vk', ...CASES.map((c) => c.file)]))
  })

  it.each(PRESETS)('%s: is listed and starts a sign-in with AUTH_<ID>_ID', async (file) => {
    const factory = await preset(file)
    const config = testConfig({ providers: [factory as never] })
    const env = envFor(file)
    setEnvDefaults(env, config)
    const { listed, start, location } = await listAndStart(config, file)
    expect(listed[file]).toMatchObject({ id: file, callbackUrl: `${ORIGIN}/auth/callback/${file}` })
    expect(config.logger.error).not.toHaveBeenCalled()
    expect(start.status).toBe(302)
    const authorization = new URL(location!)
    expect(authorization.origin).not.toBe(ORIGIN)
    expect(authorization.searchParams.get('client_id')).toBe(env[`AUTH_${envKey(file)}_ID`])
    expect(authorization.searchParams.get('redirect_uri')).toBe(`${ORIGIN}/auth/callback/${file}`)
  })

  it.each(PRESETS)('%s: can be called with no options at all', async (file) => {
    const provider = (await preset(file))()
    expect(provider.id).toBe(file)
    const config = testConfig({ providers: [provider as never] })
    setEnvDefaults(envFor(file), config)
    const { start } = await listAndStart(config, file)
    expect(config.logger.error).not.toHaveBeenCalled()
    expect(new URL(start.headers.get('location')!).searchParams.get('client_id')).toBe(`env-id-of-${file}`)
  })
})

describe('GitHub, the form of the issue', () => {
  it('`providers: [GitHub]` without AUTH_GITHUB_ID is refused at load, naming the provider and the variable', async () => {
    const config = testConfig({ providers: [GitHub as never] })
    setEnvDefaults({}, config)
    const client = new Client(config)
    const response = await client.send({ path: '/providers' })
    // Auth.js lists it and sends the sign-in to GitHub with `client_id=` (README: deliberate difference).
    expect(response.status).toBe(500)
    expect(config.logger.error).toHaveBeenCalledTimes(1)
    const error = config.logger.error.mock.calls[0]![0]
    expect(error).toBeInstanceOf(ConfigError)
    expect(error.message).toBe(
      'config.providers.0 ("github"): clientId is missing. Set AUTH_GITHUB_ID in the environment ' +
        '(read by the framework integrations and setEnvDefaults) or pass clientId to the provider',
    )
    expect(error.path).toEqual(['providers', 0, 'clientId'])
  })

  it.each([
    ['undefined, as an unset variable gives it', undefined],
    ['empty, as an empty variable gives it', ''],
  ])('`GitHub({ clientId })` with the client id %s is refused at load', async (_case, clientId) => {
    const config = testConfig({ providers: [GitHub({ clientId, clientSecret: 'gh-secret' })] })
    const client = new Client(config)
    const start = await client.send({ path: '/signin/github', method: 'POST', body: { csrfToken: 'x' } })
    expect(start.status).toBe(500)
    expect(start.headers.get('location')).toBeNull()
    expect(config.logger.error.mock.calls[0]![0]).toMatchObject({ path: ['providers', 0, 'clientId'] })
    expect(() => assertConfig(config)).toThrow(/"github"\): clientId is missing\. Set AUTH_GITHUB_ID/)
  })

  it('`providers: [GitHub]` with AUTH_GITHUB_ID / AUTH_GITHUB_SECRET goes to github.com with that client id', async () => {
    const config = testConfig({ providers: [GitHub as never] })
    setEnvDefaults({ AUTH_GITHUB_ID: 'Iv1.0123456789abcdef', AUTH_GITHUB_SECRET: 'gh-secret' }, config)
    const { location } = await listAndStart(config, 'github')
    const authorization = new URL(location!)
    expect(authorization.origin + authorization.pathname).toBe('https://github.com/login/oauth/authorize')
    expect(authorization.searchParams.get('client_id')).toBe('Iv1.0123456789abcdef')
    expect(authorization.searchParams.get('scope')).toBe('read:user user:email')
  })

  it('options the environment leaves undefined do not erase a preset default (Google keeps its issuer)', async () => {
    const config = testConfig({ providers: [Google as never] })
    setEnvDefaults({ AUTH_GOOGLE_ID: 'g-id', AUTH_GOOGLE_SECRET: 'g-secret' }, config)
    const { location } = await listAndStart(config, 'google')
    expect(new URL(location!).origin).toBe('https://accounts.google.com')
  })
})
