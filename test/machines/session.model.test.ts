import { describe, expect, it, vi, type Mock } from 'vitest'
import { Auth } from '../../core/index.js'
import { encode } from '../../core/jwt.js'
import type { AuthConfig } from '../../core/types.js'
import { sessionMachine } from '../../machines/session.machine.js'
import { authRequest, ALICE, CookieJar, ORIGIN, SECRET, setCookie, spyLogger } from '../fixtures/http.js'
import { coverage, drivePath, modelPaths, reportCoverage, type ModelDriver } from './harness.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const MAX_AGE = 2_592_000
const UPDATE_AGE = 86_400
const T0 = Math.floor(Date.now() / 1000)
const policy = { strategy: 'jwt', maxAge: MAX_AGE, updateAge: UPDATE_AGE } as const
const claims = { name: ALICE.name, email: ALICE.email, picture: ALICE.image, sub: ALICE.id }
const FRESH = { ...claims, iat: T0, exp: T0 + MAX_AGE }
const OLD = { ...claims, iat: T0 - 2 * UPDATE_AGE, exp: T0 + MAX_AGE - 2 * UPDATE_AGE }

interface World {
  cookie: 'none' | 'garbage' | 'fresh' | 'old'
  jwt: 'identity' | 'changes' | 'revokes' | 'throws'
  sessionThrows: boolean
  encodeThrows: boolean
  request: 'read' | 'update' | 'signOut'
  events: { session: Mock<(message: unknown) => void>; signOut: Mock<(message: unknown) => void> }
}

function configFor(world: World, inspect: AuthConfig['inspect']): AuthConfig {
  return {
    secret: SECRET,
    trustHost: true,
    providers: [],
    logger: spyLogger(),
    inspect,
    events: world.events,
    ...(world.encodeThrows
      ? {
          jwt: {
            encode: () => {
              throw new Error('encoder down')
            },
          },
        }
      : {}),
    callbacks: {
      jwt: ({ token }) => {
        if (world.jwt === 'throws') throw new Error('jwt callback failed')
        if (world.jwt === 'revokes') return null
        return world.jwt === 'changes' ? { ...token, role: 'admin' } : token
      },
      session: ({ session }) => {
        if (world.sessionThrows) throw new Error('session callback failed')
        return session
      },
    },
  }
}

async function sessionCookie(world: World): Promise<Record<string, string>> {
  if (world.cookie === 'none') return {}
  if (world.cookie === 'garbage') return { [SESSION_COOKIE]: 'not-a-jwe' }
  if (world.cookie === 'old') {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime((T0 - 2 * UPDATE_AGE) * 1000)
  }
  try {
    return { [SESSION_COOKIE]: await encode({ token: claims, secret: SECRET, salt: SESSION_COOKIE }) }
  } finally {
    vi.useRealTimers()
  }
}

async function csrf(config: AuthConfig, jar: CookieJar): Promise<string> {
  const response = await Auth(authRequest({ path: '/auth/csrf', cookies: jar }), config)
  jar.store(response)
  return ((await response.json()) as { csrfToken: string }).csrfToken
}

const reissueExpected = (world: World) =>
  world.request === 'update' || world.jwt === 'changes' || world.cookie === 'old'

const driver: ModelDriver<World> = {
  machine: sessionMachine,
  samples: [
    { type: 'session.read', at: T0, policy },
    { type: 'session.update', at: T0, policy, data: { name: 'Alice Liddell' } },
    { type: 'session.signOut', at: T0, policy, callbackUrl: `${ORIGIN}/bye` },
    { type: 'decodeSessionToken.done', at: T0, output: { token: FRESH } },
    { type: 'decodeSessionToken.failed', at: T0, reason: 'missing' },
    { type: 'decodeSessionToken.failed', at: T0, reason: 'invalid' },
    { type: 'runJwtCallback.done', at: T0, output: { token: FRESH, changed: false } },
    { type: 'runJwtCallback.done', at: T0, output: { token: OLD, changed: false } },
    { type: 'runJwtCallback.done', at: T0, output: { token: { ...FRESH, role: 'admin' }, changed: true } },
    { type: 'runJwtCallback.done', at: T0, output: { token: null, changed: false } },
    { type: 'runJwtCallback.failed', at: T0, reason: 'threw' },
    { type: 'runSessionCallback.done', at: T0, output: { session: { user: {}, expires: '' } } },
    { type: 'runSessionCallback.failed', at: T0, reason: 'threw' },
    { type: 'encodeSessionToken.done', at: T0, output: { value: 'sealed' } },
    { type: 'encodeSessionToken.failed', at: T0, reason: 'threw' },
    { type: 'emitSessionEvent.done', at: T0, output: null },
    { type: 'emitSignOutEvent.done', at: T0, output: null },
  ],
  label: (event) => {
    if (event.type !== 'runJwtCallback.done') return undefined
    const { token, changed } = event.output
    if (token === null) return 'jwt callback revokes the token'
    if (changed) return 'jwt callback changes the token'
    return token.iat < T0 ? 'jwt callback keeps a token older than updateAge' : 'jwt callback keeps a fresh token'
  },
  world: () => ({
    cookie: 'none',
    jwt: 'identity',
    sessionThrows: false,
    encodeThrows: false,
    request: 'read',
    events: { session: vi.fn(), signOut: vi.fn() },
  }),
  arrange: {
    'decodeSessionToken.done': (world) => {
      world.cookie = 'fresh'
    },
    'decodeSessionToken.failed': (world, event) => {
      world.cookie = event.reason === 'missing' ? 'none' : 'garbage'
    },
    'runJwtCallback.done': (world, event) => {
      const { token, changed } = event.output
      if (token === null) world.jwt = 'revokes'
      else if (changed) world.jwt = 'changes'
      else if (token.iat < T0) world.cookie = 'old'
    },
    'runJwtCallback.failed': (world) => {
      world.jwt = 'throws'
    },
    'runSessionCallback.done': () => {},
    'runSessionCallback.failed': (world) => {
      world.sessionThrows = true
    },
    'encodeSessionToken.done': () => {},
    'encodeSessionToken.failed': (world) => {
      world.encodeThrows = true
    },
    'emitSessionEvent.done': () => {},
    'emitSignOutEvent.done': () => {},
  },
  send: {
    'session.read': async (world, _event, inspect) => {
      world.request = 'read'
      const config = configFor(world, inspect)
      return Auth(authRequest({ path: '/auth/session', cookies: await sessionCookie(world) }), config)
    },
    'session.update': async (world, event, inspect) => {
      world.request = 'update'
      const config = configFor(world, inspect)
      const jar = new CookieJar(await sessionCookie(world))
      const csrfToken = await csrf(config, jar)
      const data = event.data
      return Auth(authRequest({ path: '/auth/session', json: { csrfToken, data }, cookies: jar }), config)
    },
    'session.signOut': async (world, _event, inspect) => {
      world.request = 'signOut'
      const config = configFor(world, inspect)
      const jar = new CookieJar(await sessionCookie(world))
      const csrfToken = await csrf(config, jar)
      return Auth(
        authRequest({ path: '/auth/signout', body: { csrfToken, callbackUrl: '/bye' }, cookies: jar }),
        config,
      )
    },
  },
  expect: {
    active: async (response, world) => {
      expect(response.status).toBe(200)
      const body = (await response.json()) as { user: { email: string }; expires: string }
      expect(body.user.email).toBe(ALICE.email)
      const cookie = setCookie(response, SESSION_COOKIE)
      if (reissueExpected(world)) {
        expect(cookie?.value).toMatch(/^eyJ/)
        expect(Date.parse(body.expires)).toBeGreaterThanOrEqual((T0 + MAX_AGE - 5) * 1000)
      } else {
        expect(cookie).toBeUndefined()
      }
      expect(world.events.session).toHaveBeenCalledTimes(1)
    },
    noSession: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.json()).toBeNull()
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
    invalidSession: async (response) => {
      expect(response.status).toBe(200)
      expect(await response.json()).toBeNull()
      expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    },
    revoked: async (response) => {
      expect(await response.json()).toBeNull()
      expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
    },
    signedOut: (response, world) => {
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/bye`)
      expect(setCookie(response, SESSION_COOKIE)?.attributes['max-age']).toBe('0')
      expect(world.events.signOut).toHaveBeenCalledTimes(world.cookie === 'garbage' ? 0 : 1)
    },
    leftWithoutSession: (response) => {
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(`${ORIGIN}/bye`)
      expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    },
  },
}

const paths = modelPaths(driver as ModelDriver<unknown>)
const taken: string[] = []

describe('session machine, driven through Auth over HTTP', () => {
  it.each(paths.map((path) => [path.description, path] as const))('%s', async (_name, path) => {
    taken.push(...(await drivePath(driver, path)))
  })

  it('exercises every transition of the session machine', () => {
    const result = coverage(sessionMachine, taken)
    reportCoverage(result)
    expect(result.missing).toEqual([])
    expect(result.covered).toBe(result.total)
  })
})
