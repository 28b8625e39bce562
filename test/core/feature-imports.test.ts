/**
 * Optional features are imports (`core/modules.ts`): the old shapes are refused with the line to
 * write; without the second-factor module a user with a stored factor gets no session; without
 * step-up a stale session still cannot run a sensitive action; with the modules, the behaviour is
 * as before; and a credentials-only bundle links none of the features' code.
 */
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Metafile } from 'esbuild'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { RequestContext } from '../../core/config/types.js'
import { signInCompletionFlow } from '../../core/flows/signin-completion/flow.js'
import { assertConfig, requireRecentAuth } from '../../core/index.js'
import { encode } from '../../core/jwt.js'
import { totp } from '../../core/second-factor.js'
import { freshSignInDemand, freshSignInRequired } from '../../core/session/freshness.js'
import { stepUp } from '../../core/step-up.js'
import type { AuthConfig } from '../../core/types.js'
import Passkey from '../../providers/passkey.js'
import { ALICE, Client, credentialsProvider, ORIGIN, SECRET, sessionReadContext, testConfig } from '../fixtures/http.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

afterEach(() => {
  vi.useRealTimers()
})

describe('the old shapes, refused at load with the line to write', () => {
  const refusal = (overrides: Record<string, unknown>) => {
    try {
      assertConfig(testConfig(overrides as Partial<AuthConfig>))
    } catch (error) {
      return (error as Error).message
    }
    throw new Error('the configuration was accepted')
  }

  it('refuses stepUp as a plain object, naming stepUp() and its import', () => {
    expect(refusal({ stepUp: { maxAge: 300 } })).toBe(
      "config.stepUp: step-up is configured by its import, not an object. Write `stepUp: stepUp({ … }) with import { stepUp } from 'authchart/step-up'`",
    )
    expect(refusal({ stepUp: {} })).toContain("import { stepUp } from 'authchart/step-up'")
  })

  it('refuses the second factor turned on any other way than totp()', () => {
    const line = "secondFactor: totp() with import { totp } from 'authchart/second-factor'"
    expect(refusal({ twoFactor: true })).toBe(`config.twoFactor: the second factor is turned on by its import. Write \`${line}\``)
    expect(refusal({ totp: { issuer: 'Example' } })).toContain(line)
    expect(refusal({ secondFactor: true })).toBe(`config.secondFactor: the second factor is configured by its import. Write \`${line}\``)
    expect(refusal({ secondFactor: { issuer: 'Example' } })).toContain(line)
  })

  it('refuses apiKeys as a plain object, naming apiKeys() and its import', () => {
    expect(refusal({ apiKeys: { prefix: 'ak' } })).toBe(
      "config.apiKeys: API keys are configured by their import, not an object. Write `apiKeys: apiKeys({ … }) with import { apiKeys } from 'authchart/api-keys'`",
    )
    expect(refusal({ apiKeys: stepUp() })).toContain("import { apiKeys } from 'authchart/api-keys'")
  })

  it('refuses serviceAccounts as a plain object, naming serviceAccounts() and its import', () => {
    expect(refusal({ serviceAccounts: { tokenTtl: 300 } })).toBe(
      "config.serviceAccounts: service accounts are configured by their import, not an object. Write `serviceAccounts: serviceAccounts({ … }) with import { serviceAccounts } from 'authchart/service-accounts'`",
    )
    expect(refusal({ serviceAccounts: stepUp() })).toContain("import { serviceAccounts } from 'authchart/service-accounts'")
  })

  it('refuses deviceAuthorization as a plain object, naming deviceAuthorization() and its import', () => {
    expect(refusal({ deviceAuthorization: { clients: [] } })).toBe(
      "config.deviceAuthorization: the device authorization grant is configured by its import, not an object. Write `deviceAuthorization: deviceAuthorization({ clients }) with import { deviceAuthorization } from 'authchart/device-authorization'`",
    )
    expect(refusal({ deviceAuthorization: stepUp() })).toContain("import { deviceAuthorization } from 'authchart/device-authorization'")
  })

  it('refuses a module given to the other option', () => {
    expect(refusal({ secondFactor: stepUp() })).toContain("import { totp } from 'authchart/second-factor'")
    expect(refusal({ stepUp: totp() })).toContain("import { stepUp } from 'authchart/step-up'")
  })

  it('refuses a WebAuthn provider written as a plain object, naming the preset to import', () => {
    const message = refusal({
      adapter: MemoryAdapter(createMemoryStore()),
      experimental: { enableWebAuthn: true },
      providers: [{ id: 'passkey', name: 'Passkey', type: 'webauthn' }],
    })
    expect(message).toBe(
      'config.providers.0 ("passkey"): a WebAuthn provider comes from its import, not a plain object. ' +
        "Write `Passkey({ … }) with import Passkey from 'authchart/providers/passkey' (or WebAuthn from 'authchart/providers/webauthn')`",
    )
  })

  it('checks the options of stepUp() when the configuration is loaded', () => {
    expect(refusal({ stepUp: stepUp({ maxAge: -1 }) })).toMatch(/^config\.stepUp\.maxAge: /)
    expect(refusal({ stepUp: stepUp({ actions: { 'sign-in': false } as never }) })).toMatch(/^config\.stepUp\.actions/)
  })

  it('types the options to take only the modules: a plain object is a compile error (checked by the type check)', () => {
    const shapes: AuthConfig[] = [
      // @ts-expect-error step-up is the value of stepUp(), not an object
      { providers: [], stepUp: { maxAge: 300 } },
      // @ts-expect-error the second factor is the value of totp()
      { providers: [], secondFactor: { issuer: 'Example' } },
      // @ts-expect-error a module given to the other option
      { providers: [], secondFactor: stepUp() },
      { providers: [Passkey()], secondFactor: totp(), stepUp: stepUp({ maxAge: 300 }) },
    ]
    expect(shapes).toHaveLength(4)
  })

  it('accepts the modules and the presets', () => {
    const config = assertConfig(
      testConfig({
        adapter: MemoryAdapter(createMemoryStore()),
        experimental: { enableWebAuthn: true },
        providers: [credentialsProvider(), Passkey()],
        secondFactor: totp({ issuer: 'Example' }),
        stepUp: stepUp({ maxAge: 300 }),
      }),
    )
    expect(config.flows.map((flow) => flow.id)).toEqual(expect.arrayContaining(['webauthn-signin', 'totp-enrolment', 'reauthenticate']))
    expect(config.secondFactor?.issuer).toBe('Example')
    expect(config.stepUp?.options.maxAge).toBe(300)
  })

  it('registers none of the features’ flows for a configuration that names none', () => {
    const ids = assertConfig(testConfig()).flows.map((flow) => flow.id)
    expect(ids).not.toContain('totp-enrolment')
    expect(ids).not.toContain('reauthenticate')
    expect(ids).not.toContain('webauthn-signin')
  })
})

/** A user whose second factor is stored (enrolled while the module was configured). */
async function storedFactor(store: MemoryStore): Promise<void> {
  await MemoryAdapter(store).createSecondFactor!({ id: `totp:${ALICE.id}`, userId: ALICE.id, type: 'totp', secret: 'sealed', createdAt: new Date() })
}

const withAdapter = (store: MemoryStore, overrides: Partial<AuthConfig> = {}) =>
  testConfig({ adapter: MemoryAdapter(store), session: { strategy: 'jwt' }, ...overrides })

describe('without the second-factor module, a stored second factor still stops the sign-in', () => {
  it('refuses the sign-in over HTTP: the Configuration error page, no session, the reason logged', async () => {
    const store = createMemoryStore()
    await storedFactor(store)
    const config = withAdapter(store)
    const alice = new Client(config)
    const answer = await alice.signIn({ username: 'alice', password: 'wonderland' })
    expect(answer.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(alice.jar.get('__Secure-authjs.session-token')).toBeUndefined()
    expect((await alice.session()).body).toBeNull()
    const logged = config.logger.error.mock.calls.map(([error]) => `${(error as Error).message} ${String(((error as Error).cause as { err?: unknown } | undefined)?.err ?? '')}`)
    expect(logged.join('\n')).toContain('second-factor-module-missing')
  })

  it('signs a user without a stored factor in as before', async () => {
    const alice = new Client(withAdapter(createMemoryStore()))
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    expect((await alice.session()).body).toMatchObject({ user: { email: ALICE.email } })
  })

  it('with totp(), asks for the code instead (as before)', async () => {
    const store = createMemoryStore()
    await storedFactor(store)
    const alice = new Client(withAdapter(store, { secondFactor: totp() }))
    const answer = await alice.signIn({ username: 'alice', password: 'wonderland' })
    expect(answer.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
    expect((await alice.session()).body).toBeNull()
  })

  it('refuses at the completion’s effects: the factor is found, and no code is checked', async () => {
    const store = createMemoryStore()
    await storedFactor(store)
    const contextOf = (config: AuthConfig) => {
      const resolved = assertConfig(config)
      return { config: resolved, adapter: resolved.adapter, logger: resolved.logger, at: 1_700_000_000 } as unknown as RequestContext
    }
    const { findSecondFactor, verifySecondFactor } = signInCompletionFlow.effects as Record<string, (...args: unknown[]) => unknown>
    const context = { user: { ...ALICE }, challenge: 'c-1' }
    const without = withAdapter(store)
    expect(await findSecondFactor!(context, contextOf(without), { type: 'signin.verified' })).toMatchObject({
      type: 'findSecondFactor.failed',
      reason: 'threw',
    })
    expect(await verifySecondFactor!(context, contextOf(without), { type: 'secondFactor.submit', code: '123456' })).toMatchObject({
      type: 'verifySecondFactor.failed',
      reason: 'threw',
    })
    const found = await findSecondFactor!(context, contextOf(withAdapter(store, { secondFactor: totp() })), { type: 'signin.verified' })
    expect(found).toMatchObject({ type: 'findSecondFactor.done', output: { challenge: expect.any(String) } })
    // A user with no factor needs no module.
    expect(await findSecondFactor!({ user: { ...ALICE, id: 'u-9' } }, contextOf(without), { type: 'signin.verified' })).toMatchObject({
      type: 'findSecondFactor.done',
      output: { challenge: null },
    })
  })
})

const HTML = { accept: 'text/html', 'sec-fetch-mode': 'navigate' }
const OAUTH = {
  id: 'acme',
  name: 'Acme',
  type: 'oauth' as const,
  clientId: 'app',
  clientSecret: 'app-secret',
  authorization: 'https://acme.test/authorize',
  token: 'https://acme.test/token',
  userinfo: 'https://acme.test/userinfo',
}

/** Every built-in sensitive action, as a browser or a page's script asks for it. */
interface SensitiveRequest {
  path: string
  query?: string
  body?: (client: Client) => Promise<Record<string, string>>
  /** What a fresh session gets: the action itself. */
  fresh: { status: number; location: RegExp }
}
const csrf = async (client: Client) => ({ csrfToken: await client.csrfToken() })
const ACTIONS: Record<string, SensitiveRequest> = {
  'add-passkey': { path: '/webauthn-options/passkey', query: '?action=register', fresh: { status: 200, location: /^$/ } },
  'enrol-second-factor': { path: '/two-factor', body: csrf, fresh: { status: 302, location: /\/auth\/step\/totp-enrolment$/ } },
  'remove-second-factor': {
    path: '/two-factor',
    body: async (client) => ({ ...(await csrf(client)), action: 'disable' }),
    fresh: { status: 302, location: /\/auth\/two-factor$/ },
  },
  'revoke-sessions': { path: '/sessions', body: async (client) => ({ ...(await csrf(client)), all: 'true' }), fresh: { status: 302, location: /\/auth\/sessions$/ } },
  'link-account': { path: '/signin/acme', body: csrf, fresh: { status: 302, location: /^https:\/\/acme\.test\/authorize\?/ } },
}

function sensitiveConfig(overrides: Partial<AuthConfig> = {}) {
  return testConfig({
    adapter: MemoryAdapter(createMemoryStore()),
    session: { strategy: 'database' },
    experimental: { enableWebAuthn: true },
    providers: [credentialsProvider(), Passkey({ relayingParty: { id: 'authchart.test', name: 'Test', origin: ORIGIN } }), OAUTH],
    secondFactor: totp(),
    ...overrides,
  })
}

async function ask(client: Client, name: string, headers: Record<string, string> = {}): Promise<Response> {
  const action = ACTIONS[name]!
  const body = action.body ? await action.body(client) : undefined
  return client.send({ path: `${action.path}${action.query ?? ''}`, ...(body ? { body } : {}), headers })
}

async function signedIn(config: AuthConfig): Promise<Client> {
  const client = new Client(config)
  await client.signIn({ username: 'alice', password: 'wonderland' })
  expect((await client.session()).body).toMatchObject({ user: { email: ALICE.email } })
  return client
}

describe('without the step-up module, a stale session cannot run a sensitive action', () => {
  for (const name of Object.keys(ACTIONS)) {
    it(`${name}: a stale session is sent to sign in again (a page) or gets 401 (a fetch); a fresh one passes`, async () => {
      vi.useFakeTimers({ toFake: ['Date'] })
      const config = sensitiveConfig()
      const fresh = await signedIn(config)
      const passed = await ask(fresh, name, HTML)
      expect(passed.status).toBe(ACTIONS[name]!.fresh.status)
      expect(passed.headers.get('location') ?? '').toMatch(ACTIONS[name]!.fresh.location)

      const stale = await signedIn(config)
      vi.setSystemTime(Date.now() + 11 * 60_000)
      const action = ACTIONS[name]!
      const signInAgain = `${ORIGIN}/auth/signin?${new URLSearchParams({ callbackUrl: `${ORIGIN}/auth${action.path}${action.query ?? ''}` })}`
      const page = await ask(stale, name, HTML)
      expect(page.status).toBe(303)
      expect(page.headers.get('location')).toBe(signInAgain)
      const fetched = await ask(stale, name)
      expect(fetched.status).toBe(401)
      expect(fetched.headers.get('www-authenticate')).toContain('insufficient_user_authentication')
      expect(((await fetched.json()) as { url: string }).url).toBe(signInAgain)
    })
  }

  it('lets the action through again after a fresh sign-in', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const config = sensitiveConfig()
    const alice = await signedIn(config)
    vi.setSystemTime(Date.now() + 11 * 60_000)
    expect((await ask(alice, 'remove-second-factor', HTML)).headers.get('location')).toMatch(/\/auth\/signin\?/)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    const removed = await ask(alice, 'remove-second-factor', HTML)
    expect(removed.headers.get('location')).toBe(`${ORIGIN}/auth/two-factor`)
  })

  it('serves no re-authentication page', async () => {
    const alice = await signedIn(sensitiveConfig())
    expect((await alice.send({ path: '/step/reauthenticate' })).status).not.toBe(200)
    expect((await alice.send({ path: '/reauthenticate' })).status).not.toBe(200)
  })

  it('with stepUp(), starts the re-authentication instead (as before)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const config = sensitiveConfig({ stepUp: stepUp() })
    const alice = await signedIn(config)
    vi.setSystemTime(Date.now() + 11 * 60_000)
    for (const name of ['revoke-sessions', 'remove-second-factor']) {
      const page = await ask(alice, name, HTML)
      expect(page.status).toBe(303)
      expect(page.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
    }
  })
})

describe('the core freshness rule (without the step-up module)', () => {
  const T0 = 1_700_000_000
  const contextAt = async (provenAt: number, at: number, headers: Record<string, string> = {}) => {
    const config = testConfig()
    const value = await encode({
      token: { sub: ALICE.id, name: ALICE.name, email: ALICE.email, fva: { pwd: provenAt } },
      secret: SECRET,
      salt: '__Secure-authjs.session-token',
    })
    const ctx = sessionReadContext(config, value, at) as unknown as Record<string, unknown>
    return Object.assign(ctx, {
      origin: ORIGIN,
      authUrl: `${ORIGIN}/auth`,
      setCookies: [],
      request: { url: new URL(`${ORIGIN}/auth/sessions?all=1`), headers: new Headers(headers), cookies: {} },
    }) as unknown as RequestContext
  }

  it('lets a factor proven in the last ten minutes through, and stops one proven earlier', async () => {
    expect(await freshSignInDemand(await contextAt(T0, T0 + 600), 'revoke-sessions')).toBeUndefined()
    expect(await freshSignInDemand(await contextAt(T0, T0 + 601), 'revoke-sessions')).toMatchObject({
      action: 'revoke-sessions',
      policy: { maxAge: 600 },
    })
  })

  it('answers a stopped page with a fresh sign-in back to the action, and a fetch with 401 naming it', async () => {
    const demand = { action: 'revoke-sessions' as const, policy: { maxAge: 600, factors: ['pwd'] } }
    const back = `${ORIGIN}/auth/signin?${new URLSearchParams({ callbackUrl: `${ORIGIN}/auth/sessions?all=1` })}`
    const page = freshSignInRequired(await contextAt(T0, T0 + 601, { 'sec-fetch-mode': 'navigate' }), demand)
    expect(page).toMatchObject({ status: 303, headers: { Location: back } })
    const fetched = freshSignInRequired(await contextAt(T0, T0 + 601), demand)
    expect(fetched).toMatchObject({ status: 401, body: { error: 'insufficient_user_authentication', url: back } })
  })
})

describe('requireRecentAuth (an application’s own sensitive route)', () => {
  const staleRequest = async () => {
    const hourAgo = Math.floor(Date.now() / 1000) - 3600
    const token = await encode({
      token: { sub: ALICE.id, name: ALICE.name, email: ALICE.email, fva: { pwd: hourAgo } },
      secret: SECRET,
      salt: '__Secure-authjs.session-token',
    })
    return new Request(`${ORIGIN}/settings`, { headers: { cookie: `__Secure-authjs.session-token=${token}`, accept: 'text/html' } })
  }

  it('without stepUp(), sends a stale page to sign in again: no re-authentication page is served', async () => {
    const answer = await requireRecentAuth(await staleRequest(), testConfig())
    expect(answer).toBeInstanceOf(Response)
    const location = (answer as Response).headers.get('location')!
    expect(location).toMatch(new RegExp(`^${ORIGIN}/auth/signin\\?`))
    expect(new URL(location).searchParams.get('callbackUrl')).toContain('/settings')
  })

  it('with stepUp(), sends it to the re-authentication page (as before)', async () => {
    const answer = (await requireRecentAuth(await staleRequest(), testConfig({ stepUp: stepUp() }))) as Response
    expect(answer.headers.get('location')).toMatch(new RegExp(`^${ORIGIN}/auth/reauthenticate\\?`))
  })
})

/** Bundles an application for the edge, minified, from the sources (as `scripts/bundle.mjs` does from dist/). */
async function bundleApp(imports: string, providers: string, config: string): Promise<{ bytes: number; inputs: string[] }> {
  const contents = [
    `import { Auth } from './core/index.js'`,
    `import Credentials from './providers/credentials.js'`,
    imports,
    `const config = { secret: 'a bundle-size secret of at least 32 characters', trustHost: true,`,
    `  providers: [Credentials({ credentials: { username: {}, password: { type: 'password' } }, authorize: ({ username }) => (username === 'alice' ? { id: '1', name: 'Alice' } : null) }), ${providers}],`,
    config,
    `}`,
    `export default { fetch: (request) => Auth(request, config) }`,
  ].join('\n')
  const result = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'ts', sourcefile: 'app.ts' },
    bundle: true,
    minify: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    external: ['node:*'],
    metafile: true,
    logLevel: 'silent',
  })
  const metafile: Metafile = result.metafile
  const output = Object.values(metafile.outputs)[0]!
  return { bytes: result.outputFiles[0]!.contents.length, inputs: Object.keys(output.inputs).filter((path) => output.inputs[path]!.bytesInOutput > 0) }
}

/** The code only the features bring: their packages, their flows, their charts and pages. */
const FEATURE_CODE = [
  /node_modules\/otpauth\//,
  /node_modules\/qrcode\//,
  /node_modules\/@simplewebauthn\//,
  /^core\/second-factor\.ts$/,
  /^core\/step-up\.ts$/,
  /^core\/api-keys\.ts$/,
  /^core\/api-keys\//,
  /^adapters\/(memory|postgres)-api-keys\.ts$/,
  /^core\/service-accounts\.ts$/,
  /^core\/service-accounts\//,
  /^adapters\/(memory|postgres)-service-accounts\.ts$/,
  /^core\/second-factor\/(index|totp)\.ts$/,
  /^core\/flows\/totp-enrolment\//,
  /^core\/flows\/webauthn\//,
  /^core\/flows\/reauthenticate\/(chart|index|page|federated|demand|resume)\.ts$/,
  /^machines\/(totp-enrolment|webauthn-signin)\.machine\.ts$/,
  /^core\/pages\/(webauthn|simplewebauthn-browser)\.ts$/,
  /^core\/organizations\.ts$/,
  /^core\/organizations\//,
  /^core\/device-authorization\.ts$/,
  /^core\/device-authorization\//,
  /^core\/charts\/device-authorization\.ts$/,
  /^machines\/device-authorization\.(logic|machine)\.ts$/,
  /^core\/charts\/organization-(invitation|membership)\.ts$/,
  /^machines\/organization-(invitation|membership)\.(logic|machine)\.ts$/,
]
const featureCodeIn = (inputs: readonly string[]) => inputs.filter((path) => FEATURE_CODE.some((pattern) => pattern.test(path)))

describe('a credentials-only bundle', () => {
  it('links none of the features: no otpauth, qrcode or @simplewebauthn, no step-up or WebAuthn flow', async () => {
    const lean = await bundleApp('', '', '')
    expect(featureCodeIn(lean.inputs)).toEqual([])

    // The same application naming every feature links them: the check can fail.
    const full = await bundleApp(
      [
        `import { totp } from './core/second-factor.js'`,
        `import { stepUp } from './core/step-up.js'`,
        `import Passkey from './providers/passkey.js'`,
        `import { organizations } from './core/organizations.js'`,
        `import { apiKeys } from './core/api-keys.js'`,
        `import { serviceAccounts } from './core/service-accounts.js'`,
        `import { deviceAuthorization } from './core/device-authorization.js'`,
      ].join('\n'),
      `Passkey({})`,
      `secondFactor: totp(), stepUp: stepUp(), organizations: organizations(), apiKeys: apiKeys(), serviceAccounts: serviceAccounts({ issuer: 'https://example.com/auth' }), deviceAuthorization: deviceAuthorization({ clients: [{ clientId: 'cli', name: 'CLI' }] }), experimental: { enableWebAuthn: true }, adapter: {},`,
    )
    const linked = featureCodeIn(full.inputs)
    for (const expected of [
      'otpauth',
      'qrcode',
      '@simplewebauthn',
      'core/flows/totp-enrolment/',
      'core/flows/reauthenticate/chart.ts',
      'core/flows/webauthn/',
      'core/organizations/active.ts',
      'core/organizations/manage.ts',
      'core/organizations/invitations.ts',
      'core/charts/organization-invitation.ts',
      'core/organizations/members.ts',
      'core/charts/organization-membership.ts',
      'core/api-keys',
      'core/service-accounts/token.ts',
      'core/device-authorization/flow.ts',
      'core/charts/device-authorization.ts',
    ]) {
      expect(linked.some((path) => path.includes(expected))).toBe(true)
    }
    expect(lean.bytes).toBeLessThan(full.bytes - 100_000)
  }, 60_000)

  it('links no xstate and no chart notation: the engine steps the tables compiled at build time', async () => {
    const notation = (inputs: readonly string[]) =>
      inputs.filter((path) => /node_modules\/xstate\//.test(path) || /^machines\/.*\.machine\.ts$/.test(path) || path.includes('signin-completion/extended'))
    const lean = await bundleApp('', '', '')
    expect(notation(lean.inputs)).toEqual([])
    expect(lean.inputs.some((path) => path.startsWith('core/charts/'))).toBe(true)
    // An application that extends the sign-in links the composer, and xstate with it: the check can fail.
    const extended = await bundleApp(
      `import { defineExtension, CONTINUE } from './core/define-extension.js'`,
      '',
      `extensions: [defineExtension({ id: 'x', version: '1', at: 'beforeSession', initial: 'c', states: { c: { tags: 'effect.c', on: { 'c.done': CONTINUE } } }, effects: { c: async () => null } })],`,
    )
    expect(notation(extended.inputs).some((path) => path.includes('node_modules/xstate/'))).toBe(true)
  }, 60_000)
})
