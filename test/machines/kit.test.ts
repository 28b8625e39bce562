/**
 * The model-test kit's own guarantees (`authchart/testing`): it refuses a path that holds an event
 * `createTestModel` made up, and a response that its oracle does not list or that differs from it.
 */
import { describe, expect, it } from 'vitest'
import { setup } from 'xstate'
import { Auth } from '../../core/index.js'
import { credentialsSignInMachine } from '../../machines/credentials-signin.machine.js'
import { drivePath, injectedEvents, modelPaths, ModelAssertionError, type ExpectedResponse, type ModelDriver } from '../../testing/index.js'
import { authRequest, CookieJar, ORIGIN, testConfig } from '../fixtures/http.js'

describe('a path with an event createTestModel injected', () => {
  const machine = setup({}).createMachine({
    id: 'toy',
    initial: 'idle',
    states: {
      idle: { on: { go: 'working' } },
      working: { on: { 'work.done': 'done', 'work.failed': 'broken' } },
      done: { type: 'final' },
      broken: { type: 'final' },
    },
  })
  // No sample of work.failed: the filter cannot rule the type out, createTestModel adds `{ type }`.
  const driver: ModelDriver<null> = {
    machine,
    samples: [{ type: 'go' }, { type: 'work.done' }],
    world: () => null,
    arrange: { 'work.done': () => {}, 'work.failed': () => {} },
    send: { go: async () => new Response(null) },
    expect: { done: () => {}, broken: () => {} },
  }

  it('is found among the generated paths', () => {
    const paths = modelPaths(driver)
    const injected = paths.filter((path) => injectedEvents(driver, path).length > 0)
    expect(injected.map((path) => path.description)).toEqual(['go → work.failed ⇒ broken'])
    expect(injectedEvents(driver, injected[0]!)).toEqual([{ type: 'work.failed' }])
  })

  it('fails when driven, before any request is sent', async () => {
    const path = modelPaths(driver).find((p) => injectedEvents(driver, p).length > 0)!
    const error = await drivePath(driver, path).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ModelAssertionError)
    expect((error as Error).message).toContain('createTestModel injected')
  })
})

describe('the oracle of a driver', () => {
  const T0 = Math.floor(Date.now() / 1000)
  const policy = { strategy: 'jwt', maxAge: 2_592_000 } as const
  function driverWith(oracle: Record<string, ExpectedResponse>): ModelDriver<{ errors: unknown[] }> {
    return {
      machine: credentialsSignInMachine,
      samples: [
        { type: 'credentials.submit', at: T0, providerId: 'credentials', credentials: {}, callbackUrl: ORIGIN, policy },
        { type: 'admitAttempt.done', at: T0, output: null },
        { type: 'authorize.done', at: T0, output: { user: {}, account: {} } },
        { type: 'authorize.failed', at: T0, reason: 'rejected', error: 'CredentialsSignin', code: 'credentials' },
        { type: 'authorize.failed', at: T0, reason: 'threw', error: 'CallbackRouteError' },
      ],
      world: () => ({ errors: [] }),
      arrange: { 'admitAttempt.done': () => {}, 'authorize.done': () => {}, 'authorize.failed': () => {} },
      send: {
        'credentials.submit': async (_world, _event, inspect) => {
          const config = { ...testConfig(), inspect }
          const jar = new CookieJar()
          const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: jar }), config)
          jar.store(csrf)
          const { csrfToken } = (await csrf.json()) as { csrfToken: string }
          const body = { username: 'alice', password: 'wonderland', csrfToken }
          return Auth(authRequest({ path: '/auth/callback/credentials', body, cookies: jar }), config)
        },
      },
      expect: { verified: () => {}, rejected: () => {}, failed: () => {} },
      cause: () => 'alice with her password',
      oracle,
    }
  }
  const signedIn = (paths: ReturnType<typeof modelPaths>) => paths.find((p) => p.description.endsWith('⇒ verified'))!
  const SESSION = '__Secure-authjs.session-token'
  const right: ExpectedResponse = { status: 302, location: ORIGIN }

  it('passes a response that matches its entry', async () => {
    const driver = driverWith({ 'verified ← alice with her password': { status: 302, location: ORIGIN } })
    await expect(drivePath(driver, signedIn(modelPaths(driver)))).resolves.toEqual(expect.any(Array))
  })

  it('fails a request that ends in a pair it does not list', async () => {
    const driver = driverWith({ 'rejected ← alice with her password': { status: 302 } })
    await expect(drivePath(driver, signedIn(modelPaths(driver)))).rejects.toThrow('no oracle entry for "verified ← alice with her password"')
  })

  it('fails a status, a Location or a cookie attribute that differs', async () => {
    for (const [wrong, message] of [
      [{ ...right, status: 303 }, 'status'],
      [{ ...right, location: `${ORIGIN}/elsewhere` }, 'Location'],
      // No HttpOnly and no expiry: the session cookie the engine sets has both.
      [{ ...right, cookies: { [SESSION]: { value: /^eyJ/, attributes: { path: '/', secure: true, samesite: 'Lax' } } } }, 'the attributes of the'],
      [{ ...right, cookies: { [SESSION]: { value: 'not-this', attributes: {} } } }, 'the value of the'],
      [{ ...right, cookies: { [SESSION]: null } }, `no ${SESSION} cookie`],
    ] as const) {
      const driver = driverWith({ 'verified ← alice with her password': wrong })
      await expect(drivePath(driver, signedIn(modelPaths(driver))), message).rejects.toThrow(message)
    }
  })
})
