/**
 * Adding a way of signing in is one folder and one registration: the "magic number" first factor
 * (`test/fixtures/magic-number/`) is registered here through `flows` alone, and gets its routes, a
 * block on the sign-in page, the second-factor gate, a diagram and a model test, with no other file
 * touched.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { Auth } from '../../core/index.js'
import { decode } from '../../core/jwt.js'
import { totpCode } from '../../core/second-factor/totp.js'
import type { AuthConfig } from '../../core/types.js'
import { secondFactorGateViolations } from '../../machines/checks.js'
import { describeFlowModel, flowMachine } from '../../testing/index.js'
import { diagram } from '../../visualizations/flows.js'
import { authRequest, Client, CookieJar, ORIGIN, SECRET, setCookie, spyLogger, featureConfig } from '../fixtures/http.js'
import { MagicNumber, magicNumberFlow, THE_NUMBER } from '../fixtures/magic-number/index.js'
import { flowInspector } from '../../core/inspector.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'

/** A configuration with the magic number beside the password. */
function magicConfig(overrides: Partial<AuthConfig> = {}) {
  return featureConfig({ providers: [...featureConfig().providers, MagicNumber()], flows: [magicNumberFlow], ...overrides })
}

async function postNumber(client: Client, userId: string, number: string): Promise<Response> {
  return client.send({ path: '/callback/magic-number', body: { userId, number, csrfToken: await client.csrfToken(), callbackUrl: '/dashboard' } })
}

describe('a first factor registered by its module alone', () => {
  it('is refused as a provider type without its flow, and accepted with it', async () => {
    const without = featureConfig({ providers: [MagicNumber()] })
    const refused = await Auth(authRequest({ path: '/auth/providers' }), without)
    expect(refused.status).toBe(500)
    expect(without.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining('no flow serves providers of type "magic-number"') }))
    const config = magicConfig()
    const providers = await Auth(authRequest({ path: '/auth/providers' }), config)
    expect(Object.keys(await providers.json())).toEqual(['credentials', 'magic-number'])
  })

  it('gets its route: the right number signs the user in with a session the completion issued', async () => {
    const client = new Client(magicConfig())
    const response = await postNumber(client, 'user-42', THE_NUMBER)
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    const token = await decode({ token: setCookie(response, SESSION_COOKIE)!.value, secret: SECRET, salt: SESSION_COOKIE })
    expect(token).toMatchObject({ sub: 'user-42', name: 'user-42' })
    const { body } = await client.session()
    expect(body).toMatchObject({ user: { name: 'user-42' } })
  })

  it('gets the route flags it declares: a wrong number is refused, a post without the CSRF token too', async () => {
    const client = new Client(magicConfig())
    const wrong = await postNumber(client, 'user-42', '41')
    expect(wrong.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=wrong_number`)
    expect(setCookie(wrong, SESSION_COOKIE)).toBeUndefined()
    const forged = await client.send({ path: '/callback/magic-number', body: { userId: 'user-42', number: THE_NUMBER } })
    expect(forged.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(setCookie(forged, SESSION_COOKIE)).toBeUndefined()
  })

  it('gets its block on the built-in sign-in page', async () => {
    const page = await (await new Client(magicConfig()).send({ path: '/signin' })).text()
    expect(page).toContain(`<form action="${ORIGIN}/auth/callback/magic-number" method="POST" data-magic-number="magic-number">`)
    expect(page).toContain('Sign in with Magic number')
    expect(page).toContain('Sign in with Credentials')
  })

  it('passes the second-factor gate: on the graph, and at run time for an enrolled user', async () => {
    expect(secondFactorGateViolations(flowMachine(magicConfig(), 'magic-number'))).toEqual([])
    const store = createMemoryStore()
    const config = magicConfig({ adapter: MemoryAdapter(store), session: { strategy: 'database' } })
    // Alice turns two-step verification on after signing in with her password.
    const alice = new Client(config)
    await alice.signIn({ username: 'alice', password: 'wonderland' })
    await alice.send({ path: '/two-factor', body: { csrfToken: await alice.csrfToken() } })
    const page = await (await alice.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!
    const enrolled = await alice.send({ path: '/step/totp-enrolment', body: { csrfToken: await alice.csrfToken(), code: totpCode(secret, Math.floor(Date.now() / 1000)) } })
    expect(enrolled.status).toBe(200)
    const [userId] = [...store.users.keys()]
    // The magic number for her id reaches a session only past her code.
    const attacker = new Client(config)
    const response = await postNumber(attacker, userId!, THE_NUMBER)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect((await attacker.session()).body).toBeNull()
  })

  it('gets a diagram and a place in the inspector', async () => {
    const svg = await diagram(flowMachine(magicConfig(), 'magic-number'), 'svg')
    expect(svg).toContain('<svg')
    expect(svg).toContain('checking')
    const config = magicConfig({ inspector: flowInspector() })
    const inspector = await Auth(authRequest({ path: '/auth/__flows', origin: 'http://localhost:3000' }), config)
    expect(await inspector.text()).toContain('data-flow="magic-number"')
  })
})

interface World {
  number: string
  jar: CookieJar
  logger: ReturnType<typeof spyLogger>
}

describeFlowModel<World>(
  'the magic-number flow through Auth',
  {
    machine: flowMachine(magicConfig(), 'magic-number'),
    samples: [
      { type: 'magic.submit', at: 0, providerId: 'magic-number', callbackUrl: `${ORIGIN}/dashboard`, userId: 'user-42', number: THE_NUMBER },
      { type: 'checkNumber.done', at: 0, output: null },
      { type: 'checkNumber.failed', at: 0, reason: 'wrong', error: 'CredentialsSignin', code: 'wrong_number' },
      { type: 'checkNumber.failed', at: 0, reason: 'threw', error: 'CallbackRouteError' },
    ],
    onlySamples: true,
    world: () => ({ number: THE_NUMBER, jar: new CookieJar(), logger: spyLogger() }),
    arrange: {
      'checkNumber.done': (world) => {
        world.number = THE_NUMBER
      },
      'checkNumber.failed': (world, event) => {
        world.number = event.reason === 'wrong' ? '7' : 'seven'
      },
    },
    send: {
      'magic.submit': async (world, _event, inspect) => {
        const config = magicConfig({ inspect, logger: world.logger })
        const csrf = await Auth(authRequest({ path: '/auth/csrf', cookies: world.jar }), config)
        world.jar.store(csrf)
        const { csrfToken } = (await csrf.json()) as { csrfToken: string }
        return Auth(
          authRequest({ path: '/auth/callback/magic-number', body: { userId: 'user-42', number: world.number, csrfToken, callbackUrl: '/dashboard' }, cookies: world.jar }),
          config,
        )
      },
    },
    expect: {
      verified: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
        expect(setCookie(response, SESSION_COOKIE)).toBeDefined()
      },
      failed: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      },
      rejected: (response) => {
        expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=CredentialsSignin&code=wrong_number`)
        expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
      },
    },
  },
  { describe, it },
)
