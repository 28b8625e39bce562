/**
 * The provider catalogue, preset by preset: a full sign-in through `Auth` against a stand-in of the
 * provider (its `customFetch` answers discovery, token, key set and profile requests in their
 * documented shapes, ID tokens really signed), asserting the exact authorization and token
 * requests and the user and account the sign-in produces; and each preset's configuration and
 * `profile()` output against @auth/core's preset of the same name.
 */
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import { createHash } from 'node:crypto'
import { inspect } from 'node:util'
import { describe, expect, it, vi } from 'vitest'
import { customFetch } from '../../core/index.js'
import type { OAuthConfig, TokenSet } from '../../core/oauth/provider.js'
import type { Account, AuthConfig, Profile, User } from '../../core/types.js'
import { MemoryAdapter, createMemoryStore } from '../../adapters/memory.js'
import { Client, ORIGIN, setCookie, testConfig } from '../fixtures/http.js'
import { CASES, type CatalogueCase } from './catalogue-cases.js'

const CLIENT_ID = 'client-id'
const CLIENT_SECRET = 'client-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const CODE = 'the-authorization-code'
const KID = 'catalogue-test-key'

const keys = await generateKeyPair('RS256')
const jwks = { keys: [{ ...(await exportJWK(keys.publicKey)), kid: KID, alg: 'RS256', use: 'sig' }] }

type Factory = (options?: Record<string, unknown>) => OAuthConfig<Record<string, unknown>>

async function ourPreset(file: string): Promise<Factory> {
  const url = new URL(`../../providers/${file}.ts`, import.meta.url).href
  return ((await import(/* @vite-ignore */ url)) as { default: Factory }).default
}

async function authjsPreset(file: string): Promise<Factory> {
  const specifier = `@auth/core/providers/${file}`
  return ((await import(/* @vite-ignore */ specifier)) as { default: Factory }).default
}

/** Where oauth4webapi looks for an issuer's discovery document. */
function discoveryUrl(issuer: string): string {
  const url = new URL(issuer)
  url.pathname = url.pathname === '/' ? '/.well-known/openid-configuration' : `${url.pathname.replace(/\/$/, '')}/.well-known/openid-configuration`
  return url.href
}

/** `application/x-www-form-urlencoded` as @auth/core writes client credentials. */
const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+')

interface Recorded {
  method: string
  url: string
  headers: Headers
  body: string
}

/** The provider as its customFetch sees it: every request recorded, unknown URLs refused. */
function standIn(c: CatalogueCase, issuer: string | undefined, idToken: () => Promise<string | undefined>) {
  const requests: Recorded[] = []
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init)
    const url = request.url
    requests.push({ method: request.method, url, headers: request.headers, body: await request.text() })
    if (issuer && c.discovery && url === discoveryUrl(issuer)) {
      return Response.json({ issuer, response_types_supported: ['code'], subject_types_supported: ['public'], ...c.discovery })
    }
    if (c.discovery && url === c.discovery.jwks_uri) return Response.json(jwks)
    if (url === c.token.url) {
      const id_token = await idToken()
      return Response.json({ ...c.token.response, ...(id_token ? { id_token } : {}) })
    }
    const answer = c.api?.[url]
    if (answer) {
      if (answer.status) return Response.json({ status: 'error', message: 'refused' }, { status: answer.status })
      if (answer.bytes) return new Response(answer.bytes, { headers: { 'content-type': answer.contentType ?? 'application/octet-stream' } })
      return Response.json(answer.json)
    }
    return new Response(`no stand-in for ${request.method} ${url}`, { status: 599 })
  }
  return { fetch, requests }
}

/** The configuration differences a preset may have from @auth/core's, as comparable values. */
function comparable(config: OAuthConfig<Record<string, unknown>>, issuer?: string) {
  const resolve = (url: string) => (/^https?:/.test(url) ? url : `${issuer}/${url}`)
  const endpoint = (value: unknown) => {
    if (value === undefined) return undefined
    const { url, params } = typeof value === 'string' ? { url: value, params: {} } : (value as { url?: string; params?: Record<string, unknown> })
    const parsed = new URL(resolve(url ?? 'https://authjs.dev'))
    for (const [key, param] of Object.entries(params ?? {})) {
      if (param !== undefined) parsed.searchParams.set(key, key === 'claims' ? JSON.stringify(param) : String(param))
    }
    return parsed.href
  }
  const userinfo = config.userinfo as string | { url?: string } | undefined
  return {
    id: config.id,
    name: config.name,
    type: config.type,
    issuer: config.issuer,
    checks: config.checks ?? ['pkce'],
    idToken: config.idToken ?? true,
    tokenEndpointAuthMethod: config.client?.token_endpoint_auth_method ?? 'client_secret_basic',
    idTokenSignedResponseAlg: config.client?.id_token_signed_response_alg,
    authorization: endpoint(config.authorization),
    token: endpoint(config.token),
    userinfo: typeof userinfo === 'string' ? resolve(userinfo) : userinfo?.url,
    style: config.style,
  }
}

/** What a sign-in through a preset's stand-in left behind. */
interface SignInRun {
  config: ReturnType<typeof testConfig>
  client: Client
  provider: ReturnType<typeof standIn>
  start: Response
  authorizationUrl: URL
  callback: Response
  signedIn: { user?: User; account?: Account | null; profile?: Profile }[]
}

/** How a test changes the provider's side of a sign-in (an attack, a quirk). */
interface Twist {
  /** Claims merged over the signed ID token's. */
  claims?: Record<string, unknown>
  /** The HMAC key an HS256 ID token is signed with (default: the client secret). */
  hmacSecret?: string
  /** Replaces the configured options (e.g. another issuer). */
  options?: Record<string, unknown>
  /** Replaces the callback's form fields (Apple). */
  formPost?: Record<string, string>
  /** Configuration besides the provider (an adapter). */
  config?: Partial<AuthConfig>
}

/** Signs in through the preset of `c`, its provider played by the stand-in. */
async function signInThrough(c: CatalogueCase, twist: Twist = {}): Promise<SignInRun> {
  const factory = await ourPreset(c.file)
  const options = twist.options ?? c.options
  let authorizationUrl: URL | undefined
  const defaults = factory({ ...options })
  const configuredIssuer = defaults.issuer ?? (defaults.options?.issuer as string | undefined)
  const signIdToken = async () => {
    if (!c.idToken) return undefined
    const nonce = authorizationUrl?.searchParams.get('nonce')
    const now = Math.floor(Date.now() / 1000)
    const claims = {
      iss: configuredIssuer,
      aud: CLIENT_ID,
      iat: now,
      exp: now + 600,
      ...c.idToken.claims,
      ...(nonce ? { nonce } : {}),
      ...twist.claims,
    }
    const jwt = new SignJWT(claims)
    return c.idToken.alg === 'HS256'
      ? jwt.setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(twist.hmacSecret ?? CLIENT_SECRET))
      : jwt.setProtectedHeader({ alg: 'RS256', kid: KID }).sign(keys.privateKey)
  }
  const provider = standIn(c, configuredIssuer, signIdToken)
  const signedIn: SignInRun['signedIn'] = []
  const config = testConfig({
    ...twist.config,
    providers: [factory({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, ...options, [customFetch]: provider.fetch })],
    callbacks: {
      jwt: ({ token, user, account, profile }) => {
        if (account) signedIn.push({ user, account, profile: profile! })
        return token
      },
    },
  })
  const client = new Client(config)
  const csrfToken = await client.csrfToken()
  const start = await client.send({ path: `/signin/${c.file}`, body: { csrfToken } })
  expect(config.logger.error.mock.calls, 'nothing logged as an error').toEqual([])
  authorizationUrl = new URL(start.headers.get('location')!)
  const query = authorizationUrl.searchParams
  // The provider sends the browser back: a redirect, or (Apple) a cross-site form POST.
  const answer = { code: CODE, ...(query.has('state') ? { state: query.get('state')! } : {}) }
  const formPost = twist.formPost ?? c.formPost
  const callback = formPost
    ? await client.send({ method: 'POST', path: `/callback/${c.file}`, body: { ...answer, ...formPost } })
    : await client.send({ path: `/callback/${c.file}`, query: answer })
  return { config, client, provider, start, authorizationUrl, callback, signedIn }
}

/** The sign-in was refused: the error page, a logged reason, no session. */
async function expectRefused(run: SignInRun) {
  expect(run.callback.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
  expect(run.config.logger.error).toHaveBeenCalled()
  expect(run.signedIn).toEqual([])
  expect((await run.client.session()).body).toBeNull()
}

describe.each(CASES)('$file', (c) => {
  it('matches @auth/core\'s preset: id, name, endpoints, scopes, checks, client authentication, issuer', async () => {
    const options = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, ...c.options }
    const ours = (await ourPreset(c.file))({ ...options })
    const theirs = (await authjsPreset(c.file))({ ...options })
    // Endpoints relative to the issuer (ours, Mastodon) are compared resolved, as they are used.
    expect(comparable(ours, c.options?.issuer as string | undefined)).toEqual(comparable(theirs))
    expect(ours.id).toBe(c.file)
  })

  it('signs in, sending the documented token request and producing the documented user and account', async () => {
    const { config, client, provider, authorizationUrl, callback, signedIn } = await signInThrough(c)

    // 1. The authorization request.
    const query = authorizationUrl.searchParams
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(c.authorization.endpoint)
    expect(query.get('response_type')).toBe('code')
    expect(query.get('client_id')).toBe(CLIENT_ID)
    expect(query.get('redirect_uri')).toBe(`${ORIGIN}/auth/callback/${c.file}`)
    for (const [name, value] of Object.entries(c.authorization.params)) expect(query.get(name), name).toBe(value)
    const checks = new Set((await authjsPreset(c.file))({ ...c.options }).checks ?? ['pkce'])
    expect(query.has('code_challenge'), 'PKCE').toBe(checks.has('pkce'))
    expect(query.has('state'), 'state').toBe(checks.has('state'))
    expect(query.has('nonce'), 'nonce').toBe(checks.has('nonce'))

    // 2. The callback signs the user in.
    expect(config.logger.error.mock.calls, 'nothing logged as an error').toEqual([])
    expect(callback.headers.get('location')).toBe(ORIGIN)

    // 3. The token request, byte for byte where it matters.
    const tokenRequests = provider.requests.filter((r) => r.url === c.token.url)
    expect(tokenRequests).toHaveLength(1)
    const tokenRequest = tokenRequests[0]!
    expect(tokenRequest.method).toBe('POST')
    expect(tokenRequest.headers.get('content-type')).toMatch(/^application\/x-www-form-urlencoded/)
    const body = Object.fromEntries(new URLSearchParams(tokenRequest.body))
    const verifier = body.code_verifier
    expect(body).toEqual({
      grant_type: 'authorization_code',
      code: CODE,
      redirect_uri: `${ORIGIN}/auth/callback/${c.file}`,
      ...(checks.has('pkce') ? { code_verifier: expect.any(String) } : {}),
      ...(c.token.auth === 'client_secret_post' ? { client_id: CLIENT_ID, client_secret: CLIENT_SECRET } : {}),
      ...c.token.extraBody,
    })
    if (verifier) {
      expect(query.get('code_challenge')).toBe(createHash('sha256').update(verifier).digest('base64url'))
    }
    expect(tokenRequest.headers.get('authorization')).toBe(
      c.token.auth === 'client_secret_basic' ? `Basic ${btoa(`${formEncode(CLIENT_ID)}:${formEncode(CLIENT_SECRET)}`)}` : null,
    )

    // 4. The profile requests carry the access token as documented.
    const accessToken = c.token.response.access_token as string
    for (const [url, api] of Object.entries(c.api ?? {})) {
      const request = provider.requests.find((r) => r.url === url)
      expect(request, `a request to ${url}`).toBeDefined()
      expect(request!.method).toBe(api.method ?? 'GET')
      expect(request!.headers.get('authorization')).toBe(api.bearer === false ? null : `Bearer ${accessToken}`)
      for (const [name, value] of Object.entries(api.headers ?? {})) expect(request!.headers.get(name), name).toBe(value)
    }

    // 5. The user and the account.
    expect(signedIn).toHaveLength(1)
    const { user, account } = signedIn[0]!
    const { id: userId, ...userFields } = user!
    expect(userId).toMatch(/^[0-9a-f-]{36}$/)
    expect(userFields).toEqual(c.user)
    expect(account).toMatchObject({
      provider: c.file,
      type: c.idToken ? 'oidc' : 'oauth',
      providerAccountId: c.providerAccountId,
      access_token: accessToken,
    })
    if (c.idToken) expect(account!.id_token).toEqual(expect.any(String))
    const { body: session } = await client.session()
    expect((session as { user: unknown }).user).toEqual(c.user)
  })

  it('maps the profile as @auth/core\'s preset does (its own mapping, or the default one)', async () => {
    const ours = (await ourPreset(c.file))({ ...c.options })
    const theirs = (await authjsPreset(c.file))({ ...c.options })
    if (!theirs.profile) {
      // Both use the default mapping; the sign-in above checks its output.
      expect(ours.profile).toBeUndefined()
      return
    }
    const raw = c.idToken
      ? { iss: c.options?.issuer, ...c.idToken.claims, ...(c.formPost?.user ? { user: JSON.parse(c.formPost.user) } : {}) }
      : (Object.values(c.api ?? {}).find((a) => a.json !== undefined)?.json as Record<string, unknown>)
    const profile = c.file === 'notion' ? (raw as { bot: { owner: { user: Profile } } }).bot.owner.user : raw
    const tokens: TokenSet = { ...c.token.response, access_token: c.token.response.access_token as string }
    // @auth/core fetches Entra ID's photo with the global fetch: give it the same stand-in.
    const photo = c.api?.['https://graph.microsoft.com/v1.0/me/photos/48x48/$value']
    if (photo) vi.stubGlobal('fetch', async () => new Response(photo.bytes, { headers: { 'content-type': 'image/jpeg' } }))
    try {
      const theirUser = await theirs.profile(structuredClone(profile) as never, tokens)
      const ourUser = await ours.profile!(structuredClone(profile) as never, tokens)
      expect(ourUser).toEqual(theirUser)
    } finally {
      vi.unstubAllGlobals()
    }
  })
})

const caseOf = (file: string) => CASES.find((c) => c.file === file)!

// Strava, WordPress and HubSpot give numeric ids (kept as numbers, as Auth.js does); Discord a string.
describe.each(['strava', 'wordpress', 'hubspot', 'discord'])(
  '%s with an adapter',
  (file) => {
    it('links the account once under its providerAccountId and finds the same user on the next sign-in', async () => {
      const c = caseOf(file)
      const store = createMemoryStore()
      const adapter = MemoryAdapter(store)
      const first = await signInThrough(c, { config: { adapter } })
      expect(first.callback.headers.get('location')).toBe(ORIGIN)
      expect([...store.accounts.values()]).toEqual([
        expect.objectContaining({ provider: file, type: 'oauth', providerAccountId: c.providerAccountId, access_token: c.token.response.access_token }),
      ])
      expect(store.users.size).toBe(1)
      const second = await signInThrough(c, { config: { adapter } })
      expect(second.callback.headers.get('location')).toBe(ORIGIN)
      expect(store.users.size, 'no second user').toBe(1)
      expect(store.accounts.size, 'no second account').toBe(1)
      expect((await second.client.session()).body).toMatchObject({ user: { name: c.user.name } })
    })
  },
)

describe('preset quirks and attacks on them', () => {
  it('LINE: refuses an HS256 ID token signed with another secret', async () => {
    await expectRefused(await signInThrough(caseOf('line'), { hmacSecret: 'not-the-channel-secret-0123456789-abcdef' }))
  })

  it('LINE: refuses an ID token whose algorithm is not the configured HS256', async () => {
    const line = caseOf('line')
    await expectRefused(await signInThrough({ ...line, idToken: { ...line.idToken!, alg: 'RS256' } }))
  })

  it("Microsoft Entra ID (common): refuses an ID token whose issuer is not its own tenant's", async () => {
    await expectRefused(
      await signInThrough(caseOf('microsoft-entra-id'), {
        claims: { iss: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0' },
      }),
    )
  })

  it('Microsoft Entra ID (one tenant): refuses a token naming another tenant, accepts its own', async () => {
    const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47'
    const issuer = `https://login.microsoftonline.com/${tenant}/v2.0`
    const entra = caseOf('microsoft-entra-id')
    const single: CatalogueCase = { ...entra, discovery: { ...entra.discovery, issuer } }
    const foreign = await signInThrough(single, { options: { issuer } })
    await expectRefused(foreign)
    const own = await signInThrough(single, { options: { issuer }, claims: { iss: issuer, tid: tenant } })
    expect(own.callback.headers.get('location')).toBe(ORIGIN)
    expect(own.signedIn[0]!.user).toMatchObject({ name: 'Abe Lincoln' })
  })

  it('Microsoft Entra ID: signs in without a photo when Graph has none', async () => {
    const entra = caseOf('microsoft-entra-id')
    const run = await signInThrough({ ...entra, api: {} })
    expect(run.callback.headers.get('location')).toBe(ORIGIN)
    expect(run.signedIn[0]!.user).toMatchObject({ name: 'Abe Lincoln', image: null })
  })

  it('Apple: names the user by e-mail address when the callback carries no (or no readable) user', async () => {
    for (const formPost of [{}, { user: '{not json' }, { user: '"a string"' }] as Record<string, string>[]) {
      const run = await signInThrough(caseOf('apple'), { formPost })
      expect(run.callback.headers.get('location')).toBe(ORIGIN)
      expect(run.signedIn[0]!.user).toMatchObject({ name: 'Tim@privaterelay.appleid.com', email: 'tim@privaterelay.appleid.com' })
    }
  })

  it("Apple: seals the flow in a SameSite=None cookie, so Apple's cross-site form POST brings it back", async () => {
    const run = await signInThrough(caseOf('apple'))
    expect(setCookie(run.start, '__Secure-authjs.state')?.attributes).toMatchObject({ samesite: 'None', secure: true })
    expect(run.callback.headers.get('location')).toBe(ORIGIN)
    expect(run.client.jar.get('__Secure-authjs.state'), 'the flow cookie is spent').toBeUndefined()
  })

  it('Twitch: conforms an error answer that names its error `message`', async () => {
    const twitch = caseOf('twitch')
    const { conformTwitchToken } = (await import('../../providers/twitch.js'))
    const conformed = await conformTwitchToken(Response.json({ status: 400, message: 'Invalid authorization code' }, { status: 400 }))
    expect(conformed!.status).toBe(400)
    expect(await conformed!.json()).toEqual({ error: 'invalid_request', error_description: 'Invalid authorization code' })
    expect(await conformTwitchToken(Response.json({ ...twitch.token.response, scope: 'openid' }))).toBeUndefined()
  })

  it('HubSpot: a refused profile request is logged without the access token its URL carries', async () => {
    const hubspot = caseOf('hubspot')
    const [url, answer] = Object.entries(hubspot.api!)[0]!
    const run = await signInThrough({ ...hubspot, api: { [url]: { ...answer, status: 401 } } })
    await expectRefused(run)
    const logged = inspect(run.config.logger.error.mock.calls, { depth: 8 })
    expect(logged).toContain('answered 401')
    expect(logged).not.toContain(hubspot.token.response.access_token as string)
  })

  it('Mastodon: without an issuer, answers with a configuration error naming it', async () => {
    const Mastodon = await ourPreset('mastodon')
    const config = testConfig({ providers: [Mastodon({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET })] })
    const client = new Client(config)
    const response = await client.send({ path: '/providers' })
    expect(response.status).toBe(500)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringMatching(/mastodon.*issuer/) }))
  })

  it('Mastodon: an instance named by its issuer is not asked for a discovery document', async () => {
    const run = await signInThrough(caseOf('mastodon'))
    expect(run.callback.headers.get('location')).toBe(ORIGIN)
    expect(run.provider.requests.map((r) => r.url)).not.toContainEqual(expect.stringContaining('.well-known'))
  })

  it('TikTok: refreshes with client_key in the body too', async () => {
    const TikTok = await ourPreset('tiktok')
    const { resolveOAuthProvider } = await import('../../core/oauth/provider.js')
    const { refreshAccessToken } = await import('../../core/oauth/refresh.js')
    const tiktok = caseOf('tiktok')
    const provider = standIn(tiktok, undefined, async () => undefined)
    const resolved = resolveOAuthProvider(
      { ...TikTok({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }), clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, [customFetch]: provider.fetch },
      undefined,
    )
    await refreshAccessToken(resolved, { provider: 'tiktok', refresh_token: 'rft.old' }, 0)
    const body = Object.fromEntries(new URLSearchParams(provider.requests[0]!.body))
    expect(body).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'rft.old', client_key: CLIENT_ID, client_id: CLIENT_ID })
  })
})
