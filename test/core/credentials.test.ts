import { describe, expect, it, vi } from 'vitest'
import { Auth, raw } from '../../core/index.js'
import { AccessDenied, CredentialsSignin, Verification } from '../../core/errors.js'
import { attemptIdentifier, malformedCredential } from '../../core/flows/credentials/flow.js'
import { decode } from '../../core/jwt.js'
import type { CredentialsConfig } from '../../core/types.js'
import {
  ALICE,
  authRequest,
  Client,
  credentialsProvider,
  ORIGIN,
  SECRET,
  testConfig,
} from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const good = { username: 'alice', password: 'wonderland' }

describe('credentials sign-in', () => {
  it('signs in, sets an Auth.js-format session cookie, and redirects to the origin by default', async () => {
    const client = new Client(testConfig())
    const response = await client.signIn(good)
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(ORIGIN)
    const token = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ name: ALICE.name, email: ALICE.email, picture: ALICE.image, sub: ALICE.id })
    const { body } = await client.session()
    expect(body).toMatchObject({ user: { email: ALICE.email } })
  })

  it('redirects to a same-origin callbackUrl after sign-in', async () => {
    const client = new Client(testConfig())
    const response = await client.signIn(good, { callbackUrl: '/dashboard?tab=1' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard?tab=1`)
  })

  it('does not redirect to another origin through callbackUrl (no open redirect)', async () => {
    for (const callbackUrl of ['https://evil.example/phish', '//evil.example/x', 'https://authchart.test.evil.example/']) {
      const client = new Client(testConfig())
      const response = await client.signIn(good, { callbackUrl })
      const location = new URL(response.headers.get('location')!, ORIGIN)
      expect(location.origin, callbackUrl).toBe(ORIGIN)
    }
  })

  it('answers 400 for a callbackUrl that is not http(s), logging InvalidCallbackUrl', async () => {
    const config = testConfig()
    const client = new Client(config)
    const response = await client.signIn(good, { callbackUrl: 'javascript:alert(1)' })
    expect(response.status).toBe(400)
    expect(await response.json()).toBe('Bad request.')
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(config.logger.error.mock.calls.map(([e]) => e.type)).toContain('InvalidCallbackUrl')
  })

  it('rejects wrong credentials with CredentialsSignin and code=credentials', async () => {
    const client = new Client(testConfig())
    const response = await client.signIn({ username: 'alice', password: 'nope' })
    expect(response.headers.get('location')).toBe(
      `${ORIGIN}/auth/signin?error=CredentialsSignin&code=credentials`,
    )
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('passes a custom CredentialsSignin code to the sign-in page', async () => {
    class TooManyAttempts extends CredentialsSignin {
      override code = 'too-many-attempts'
    }
    const client = new Client(
      testConfig({
        providers: [
          credentialsProvider(() => {
            throw new TooManyAttempts()
          }),
        ],
      }),
    )
    const response = await client.signIn(good)
    expect(response.headers.get('location')).toBe(
      `${ORIGIN}/auth/signin?error=CredentialsSignin&code=too-many-attempts`,
    )
  })

  it('hides an unexpected authorize error behind the Configuration error page and logs it', async () => {
    const config = testConfig({
      providers: [
        credentialsProvider(() => {
          throw new Error('connection refused to 10.0.0.7:5432')
        }),
      ],
    })
    const response = await new Client(config).signIn(good)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    const logged = config.logger.error.mock.calls[0]![0]
    expect(logged.type).toBe('CallbackRouteError')
    expect(logged.cause.err.message).toContain('connection refused')
  })

  it('passes the whole body and a Request to authorize', async () => {
    const authorize = vi.fn(() => ({ ...ALICE }))
    await new Client(testConfig({ providers: [credentialsProvider(authorize)] })).signIn(good)
    const [credentials, request] = authorize.mock.calls[0] as unknown as [Record<string, string>, Request]
    expect(credentials).toMatchObject({ ...good, csrfToken: expect.any(String) })
    expect(request).toBeInstanceOf(Request)
    expect(request.method).toBe('POST')
    expect(await request.json()).toMatchObject(good)
  })

  it('gives a user without an id a random one', async () => {
    const client = new Client(
      testConfig({ providers: [credentialsProvider(() => ({ name: 'Anon' }))] }),
    )
    await client.signIn(good)
    const token = await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
    expect(token?.sub).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('sends a refused sign-in to the AccessDenied error page', async () => {
    const client = new Client(testConfig({ callbacks: { signIn: () => false } }))
    const response = await client.signIn(good)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('treats a throwing signIn callback as AccessDenied', async () => {
    const signIn = () => {
      throw new Error('nope')
    }
    const response = await new Client(testConfig({ callbacks: { signIn } })).signIn(good)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
  })

  it('propagates an AuthError thrown by the signIn callback as its own type', async () => {
    const signIn = () => {
      throw new Verification()
    }
    const response = await new Client(testConfig({ callbacks: { signIn } })).signIn(good)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Verification`)
  })

  it('follows a URL returned by the signIn callback without creating a session', async () => {
    const client = new Client(testConfig({ callbacks: { signIn: () => '/terms' } }))
    const response = await client.signIn(good)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/terms`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('calls the jwt callback with trigger signIn, the user and the account', async () => {
    const jwt = vi.fn(({ token }) => token)
    await new Client(testConfig({ callbacks: { jwt } })).signIn(good)
    expect(jwt).toHaveBeenCalledWith({
      token: { name: ALICE.name, email: ALICE.email, picture: ALICE.image, sub: ALICE.id },
      user: expect.objectContaining({ id: ALICE.id }),
      account: { providerAccountId: ALICE.id, type: 'credentials', provider: 'credentials' },
      isNewUser: false,
      trigger: 'signIn',
    })
  })

  it('fires events.signIn, and survives an event handler that throws', async () => {
    const signIn = vi.fn(() => {
      throw new Error('audit log down')
    })
    const config = testConfig({ events: { signIn } })
    const client = new Client(config)
    const response = await client.signIn(good)
    expect(response.headers.get('location')).toBe(ORIGIN)
    expect(signIn).toHaveBeenCalledTimes(1)
    expect(config.logger.error.mock.calls.map(([e]) => e.type)).toContain('EventError')
  })

  it('sends a POST /signin for the credentials provider back to the sign-in page', async () => {
    const client = new Client(testConfig())
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/signin/credentials', body: { csrfToken } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
  })

  it('refuses GET /callback/credentials with the Configuration error', async () => {
    const response = await Auth(authRequest({ path: '/auth/callback/credentials' }), testConfig())
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
  })

  it('answers {url} instead of a redirect when asked with X-Auth-Return-Redirect', async () => {
    const client = new Client(testConfig())
    const csrfToken = await client.csrfToken()
    const response = await client.send({
      path: '/callback/credentials',
      body: { ...good, csrfToken },
      headers: { 'X-Auth-Return-Redirect': '1' },
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ url: ORIGIN })
    expect(client.jar.get(SESSION_COOKIE)).toMatch(/^eyJ/)
  })

  it('returns the internal response to raw callers', async () => {
    const config = { ...testConfig(), raw } as const
    const internal = await Auth(authRequest({ path: '/auth/providers' }), config)
    expect(internal).toMatchObject({
      headers: { 'Content-Type': 'application/json' },
      body: { credentials: expect.objectContaining({ id: 'credentials' }) },
    })
  })
})

describe('raw callers', () => {
  it('receive CredentialsSignin with its code as an exception', async () => {
    const config = { ...testConfig(), raw } as const
    const client = new Client(testConfig())
    const csrfToken = await client.csrfToken()
    const request = authRequest({
      path: '/auth/callback/credentials',
      body: { username: 'alice', password: 'nope', csrfToken },
      cookies: client.jar,
    })
    const error = await Auth(request, config).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(CredentialsSignin)
    expect((error as CredentialsSignin).code).toBe('credentials')
  })

  it('receive AccessDenied as an exception when the signIn callback refuses', async () => {
    const base = testConfig({ callbacks: { signIn: () => false } })
    const config = { ...base, raw } as const
    const client = new Client(base)
    const csrfToken = await client.csrfToken()
    const request = authRequest({
      path: '/auth/callback/credentials',
      body: { ...good, csrfToken },
      cookies: client.jar,
    })
    await expect(Auth(request, config)).rejects.toBeInstanceOf(AccessDenied)
  })
})

describe('what a credentials attempt is counted under, and which bodies reach authorize', () => {
  // As the flow sees a provider: its options merged over the defaults.
  const provider = { credentials: { username: {}, password: { type: 'password' } } } as unknown as CredentialsConfig

  it('spells the identifier as String() does, whatever the shape of the field', () => {
    expect(attemptIdentifier(provider, { username: ' Alice ' })).toBe('alice')
    expect(attemptIdentifier(provider, { username: ['alice'] })).toBe('alice')
    expect(attemptIdentifier(provider, { username: [[' ALICE']] })).toBe('alice')
    expect(attemptIdentifier(provider, { username: 42 })).toBe('42')
    expect(attemptIdentifier(provider, { username: null })).toBe('null')
    // An object whose toString is not a function makes String() throw; it is counted all the same.
    expect(attemptIdentifier(provider, { username: { toString: 'alice' } })).toBe('[object object]')
    expect(attemptIdentifier(provider, { password: 'x' })).toBeUndefined()
  })

  it('lets only strings and numbers through to authorize, naming the first other field', () => {
    expect(malformedCredential({ username: 'alice', password: 'x', pin: 1234 })).toBeUndefined()
    expect(malformedCredential({ username: ['alice'], password: 'x' })).toBe('username')
    expect(malformedCredential({ username: 'alice', password: { $ne: null } })).toBe('password')
    expect(malformedCredential({ username: 'alice', remember: true })).toBe('remember')
    expect(malformedCredential({ username: null })).toBe('username')
    expect(malformedCredential({})).toBeUndefined()
  })

  it('logs the refused field name with its control characters escaped, never its value', async () => {
    const config = testConfig()
    const client = new Client(config)
    const csrfToken = await client.csrfToken()
    const forged = await client.send({ path: '/callback/credentials', json: { 'x\r\nforged': ['secret-value'], username: 'alice', password: 'wonderland', csrfToken } })
    expect(forged.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=credentials`)
    const response = await client.send({ path: '/callback/credentials', json: { username: ['alice'], password: 'wonderland', csrfToken: await client.csrfToken() } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=credentials`)
    const logged = config.logger.error.mock.calls.map(([error]) => (error as Error).message)
    expect(logged).toEqual([
      'The credential "x\\r\\nforged" is not a string or a number',
      'The credential "username" is not a string or a number',
    ])
    expect(logged.join('\n')).not.toContain('secret-value')
  })
})
