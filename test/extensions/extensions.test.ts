/**
 * Applications' extensions of the sign-in: refused when the config is loaded if they could bypass
 * a security step; run, when accepted, on every way of signing in, after the second factor and
 * with CSRF-checked steps; and a flow sealed by another shape of the chart is refused cleanly.
 */
import { nullable, object, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { assign, setup } from 'xstate'
import { termsExtension } from 'authchart/extensions/terms'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { assertConfig, Auth } from '../../core/index.js'
import { CONTINUE, DENY, denialSentence, denyBecause, toStepPage, type FlowExtension } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { ConfigError } from '../../core/errors.js'
import { sealFactorSecret } from '../../core/second-factor/index.js'
import { createTotpSecret, totpCode } from '../../core/second-factor/totp.js'
import { createHandler } from '../../core/auth.js'
import { defineFlow } from '../../core/engine/flow.js'
import { routesOf, type Route } from '../../core/http/routes.js'
import { decode, encode } from '../../core/jwt.js'
import { SIGN_IN_COMPLETION, SIGN_IN_COMPLETION_VERSION, SignInCompletionContext } from '../../machines/signin-completion.machine.js'
import { finalStateOutcome } from '../../machines/shared/outcome.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, Client, ORIGIN, SECRET, spyLogger, featureConfig } from '../fixtures/http.js'
import { refusal } from './helpers.js'
import { everyFlow } from '../../core/flows/catalogue.js'

/** Every route authchart ships: the built-in flows' and the optional features'. */
const routes = routesOf(everyFlow)

const SESSION_COOKIE = '__Secure-authjs.session-token'

/** A minimal safe extension; each refusal test breaks one thing about it. */
function extension(overrides: Partial<FlowExtension> = {}): FlowExtension {
  return defineExtension({
    id: 'check',
    version: '1',
    at: 'beforeSession',
    initial: 'checking',
    states: {
      checking: { tags: 'effect.check', on: { 'check.done': CONTINUE, 'check.failed': DENY } },
    },
    effects: { check: async (_context, ctx) => ({ type: 'check.done', output: null, at: ctx.at }) },
    ...overrides,
  })
}

describe('an extension is refused when the config is loaded', () => {
  it.each([
    ['a state that targets a core state (skipping the gate or issuing a session)', { checking: { tags: 'effect.check', on: { 'check.done': 'issuingSession' } } }, 'targets "issuingSession"'],
    ['a final state of its own', { checking: { type: 'final' } }, 'may not be final'],
    ['an invoked actor', { checking: { tags: 'effect.check', invoke: { src: 'x' }, on: {} } }, 'uses "invoke"'],
    ['a delayed transition', { checking: { tags: 'effect.check', after: { 1000: CONTINUE }, on: {} } }, 'uses "after"'],
    ['an eventless transition', { checking: { tags: 'effect.check', always: CONTINUE, on: {} } }, 'uses "always"'],
    ['an entry action', { checking: { tags: 'effect.check', entry: 'x', on: {} } }, 'uses "entry"'],
    ['a core effect (issuing a session itself)', { checking: { tags: 'effect.issueSession', on: { 'issueSession.done': CONTINUE } } }, 'runs the core effect issueSession'],
    ['a state named like a core state', { preparingSession: { tags: 'effect.check', on: { 'check.done': CONTINUE } }, checking: { tags: 'effect.check', on: {} } }, 'would replace a state'],
    ['a waiting state without its step', { checking: { tags: 'awaitsRequest', on: { 'x.go': CONTINUE } } }, 'declare meta.step'],
    ['a step event the state does not take', { checking: { tags: 'awaitsRequest', meta: { outcome: toStepPage, step: { page: 'p', events: { 'x.go': object() } } }, on: {} } }, 'does not take it'],
    ['a state that neither waits nor runs an effect', { checking: { on: { 'x.go': CONTINUE } } }, 'neither waits'],
    ['a denial reason that is not a plain word', { checking: { tags: 'effect.check', on: { 'check.failed': denyBecause('No&Way') } } }, 'denies for "No&Way"'],
    ['a denial with an empty reason', { checking: { tags: 'effect.check', on: { 'check.failed': denyBecause('') } } }, 'denies for ""'],
  ])('%s', (_name, states, message) => {
    expect(refusal([extension({ states: states as never })])).toContain(message)
  })

  it('an action that is not an assign (a side effect in the chart)', () => {
    expect(refusal([extension({ actions: { sideEffect: () => {} } })])).toContain('is not an assign')
  })

  it('a guard or action named like a core one', () => {
    expect(refusal([extension({ guards: { isEnrolled: () => false } })])).toContain('"isEnrolled" would replace')
    expect(refusal([extension({ actions: { recordDenial: assign({}) } })])).toContain('"recordDenial" would replace')
  })

  it('a context field named like a core one', () => {
    expect(refusal([extension({ context: { schema: { amr: object() }, initial: { amr: {} } } })])).toContain(
      'context field "amr"',
    )
  })

  it('an effect named like a core one, or one no extension implements', () => {
    expect(refusal([extension({ effects: { check: async () => ({ type: 'check.done' }), prepareSession: async () => ({ type: 'x' }) } })])).toContain(
      'effect "prepareSession" would replace',
    )
    expect(refusal([extension({ effects: {} })])).toContain('no extension implements the effect "check"')
  })

  it('a page no extension renders', () => {
    const waiting = {
      checking: { tags: 'awaitsRequest', meta: { outcome: toStepPage, step: { page: 'mine', events: { 'x.go': object() } } }, on: { 'x.go': CONTINUE } },
    }
    expect(refusal([extension({ states: waiting as never, effects: {} })])).toContain('no extension renders the page "mine"')
  })

  it('two extensions running one effect, a bad id or an unknown point', () => {
    expect(refusal([extension(), extension({ id: 'other', states: { other: { tags: 'effect.check', on: { 'check.done': CONTINUE } } }, initial: 'other' })])).toContain('extensions "check" and "other" both name the effect "check"')
    expect(refusal([extension({ id: 'bad id' })])).toContain('needs an id')
    expect(refusal([extension({ at: 'beforeAnything' as never })])).toContain('"at" must be one of')
  })

  it('answers every request with the Configuration error while the config is unsafe', async () => {
    const config = featureConfig({ extensions: [extension({ states: { checking: { type: 'final' } } as never })] })
    const response = await Auth(authRequest({ path: '/auth/session' }), config)
    expect(response.status).toBe(500)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ name: 'ConfigError' }))
  })
})

describe('a refusal with a reason', () => {
  const refusing = (denials?: Record<string, string>) =>
    extension({
      states: { checking: { tags: 'effect.check', on: { 'check.done': denyBecause('too-young') } } },
      ...(denials ? { denials } : {}),
    })

  it('redirects with the extension id and reason as the code, and the page says it in the extension\'s words', async () => {
    const config = featureConfig({ extensions: [refusing({ 'too-young': 'You must be 18 or older to sign in here.' })] })
    const client = new Client(config)
    const response = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied&code=check.too-young`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    const page = await client.send({ path: '/error', query: { error: 'AccessDenied', code: 'check.too-young' } })
    expect(page.status).toBe(403)
    const html = await page.text()
    expect(html).toContain('<h1>Not signed in</h1>')
    expect(html).toContain('You must be 18 or older to sign in here.')
  })

  it('keeps Auth.js\'s AccessDenied page for a code no extension explains', async () => {
    const client = new Client(featureConfig({ extensions: [refusing()] }))
    for (const code of ['check.too-young', 'check.toString', 'other.declined', 'toString', '']) {
      const html = await (await client.send({ path: '/error', query: { error: 'AccessDenied', code } })).text()
      expect(html, code).toContain('<h1>Access Denied</h1>')
      expect(html, code).toContain('You do not have permission to sign in.')
    }
  })

  it('finds the sentence only under its own extension and reason', () => {
    const extensions = [refusing({ 'too-young': 'Too young.' })]
    expect(denialSentence(extensions, 'check.too-young')).toBe('Too young.')
    expect(denialSentence(extensions, 'check.constructor')).toBeUndefined()
    expect(denialSentence(extensions, '.too-young')).toBeUndefined()
    expect(denialSentence(extensions, 'too-young')).toBeUndefined()
    expect(denialSentence(extensions, undefined)).toBeUndefined()
  })
})

/**
 * Issue 24, finding 8: an extension's waiting state could answer with its own `meta.outcome` (a
 * session cookie before the second factor), and its `assign` actions could write core fields
 * (`amr`, so a password-only sign-in got a JWT with `aal: 2`). Both are refused at load; the
 * engine, at run time, accepts a session only from the completion's own issuing states.
 */
describe('an extension cannot write the session or the core context', () => {
  /** An extension at `at` whose one effect state leaves with `transition`. */
  function leaving(transition: Record<string, unknown>, overrides: Partial<FlowExtension> = {}): FlowExtension {
    return extension({ states: { checking: { tags: 'effect.check', on: { 'check.done': { target: CONTINUE, ...transition } } } } as never, ...overrides })
  }

  it('a password-only sign-in never gets a JWT with aal 2 from an extension writing amr', async () => {
    const probes = [
      leaving({ actions: assign({ amr: ['otp'] }) }),
      leaving({ actions: 'claimOtp' }, { actions: { claimOtp: assign({ amr: () => ['otp'] }) } }),
      leaving({ actions: 'rememberSecondFactor' }),
    ]
    for (const probe of probes) {
      const config = featureConfig({ extensions: [probe] })
      const client = new Client(config)
      const response = await client.signIn({ username: 'alice', password: 'wonderland' })
      const token = client.jar.get(SESSION_COOKIE)
      const claims = token ? await decode({ token, secret: SECRET, salt: SESSION_COOKIE }) : null
      expect(claims?.aal).toBeUndefined()
      expect(response.status).toBe(500)
      expect(token).toBeUndefined()
      expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ name: 'ConfigError' }))
    }
  })

  it('no session cookie is set by a waiting state of an extension before the second factor', async () => {
    const store = createMemoryStore()
    const adapter = MemoryAdapter(store)
    await adapter.createSecondFactor({ id: 'f-1', userId: 'u-1', type: 'totp', secret: await sealFactorSecret(createTotpSecret(), [SECRET]), createdAt: new Date() })
    const minting = defineExtension({
      id: 'mint',
      version: '1',
      at: 'afterFirstFactor',
      initial: 'minting',
      context: { schema: { minted: nullable(string()) }, initial: { minted: null } },
      states: {
        minting: { tags: 'effect.mint', on: { 'mint.done': { target: 'waiting', actions: 'rememberMinted' } } },
        waiting: {
          tags: 'awaitsRequest',
          meta: {
            outcome: ({ minted }: { minted: string }) => ({ type: 'redirect', url: '/', session: { op: 'set', value: minted, expires: 2_000_000_000 } }),
            step: { page: 'second-factor', events: { 'x.go': object() } },
          },
          on: { 'x.go': CONTINUE },
        },
      },
      actions: { rememberMinted: assign({ minted: ({ event }: { event: { output?: string } }) => event.output ?? null }) },
      effects: {
        async mint(context, ctx) {
          const token = await encode({ token: { sub: String(context.user?.id) }, secret: SECRET, salt: SESSION_COOKIE })
          return { type: 'mint.done', output: token, at: ctx.at }
        },
      },
    })
    const config = featureConfig({ adapter, extensions: [minting] })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('extension "mint": state "waiting" answers with its own meta.outcome') }),
    )
  })

  it.each([
    ['a waiting state with an outcome of its own', { checking: { tags: 'awaitsRequest', meta: { outcome: () => ({ type: 'redirect', url: '/' }), step: { page: 'second-factor', events: { 'x.go': object() } } }, on: { 'x.go': CONTINUE } } }, 'state "checking" answers with its own meta.outcome'],
    ['an effect state with an outcome', { checking: { tags: 'effect.check', meta: { outcome: toStepPage }, on: { 'check.done': CONTINUE } } }, 'state "checking" has a meta.outcome'],
    ['an inline assign to a core field', { checking: { tags: 'effect.check', on: { 'check.done': { target: CONTINUE, actions: assign({ amr: ['otp'] }) } } } }, 'state "checking" on "check.done": its action writes the core field "amr"'],
    ['an inline assign computing its fields', { checking: { tags: 'effect.check', on: { 'check.done': { target: CONTINUE, actions: assign(() => ({ user: null })) } } } }, 'state "checking" on "check.done": its action computes which fields it writes'],
    ['an inline action that is not an assign', { checking: { tags: 'effect.check', on: { 'check.done': { target: CONTINUE, actions: () => {} } } } }, 'state "checking" on "check.done": its action is not an assign'],
    ['a core action by name', { checking: { tags: 'effect.check', on: { 'check.done': { target: CONTINUE, actions: ['rememberPreparedSession'] } } } }, 'state "checking" on "check.done" names the action "rememberPreparedSession", which is not its own'],
  ])('%s is refused at load, naming the extension and the state', (_name, states, message) => {
    const refused = refusal([extension({ states: states as never })])
    expect(refused).toContain('extension "check"')
    expect(refused).toContain(message)
  })

  it.each(Object.keys(SignInCompletionContext.schema))('an assign to the core field "%s" is refused by name', (field) => {
    expect(refusal([extension({ actions: { sneaky: assign({ [field]: null }) } })])).toContain(
      `extension "check": action "sneaky" writes the core field "${field}"`,
    )
    expect(refusal([extension({ context: { schema: {}, initial: { [field]: null } } })])).toContain(
      `extension "check": context field "${field}" would replace one of the sign-in completion`,
    )
  })

  it('a named assign computing its fields is refused with what to write instead', () => {
    expect(refusal([extension({ actions: { remember: assign(({ event }: { event: { name?: string } }) => ({ chosen: event.name })) } })])).toContain(
      'action "remember" computes which fields it writes: write assign({ <field>: ({ event }) => … })',
    )
  })

  it('an assign of its own fields, and a waiting state that shows its step page, are accepted', () => {
    const own = extension({
      context: { schema: { chosen: nullable(string()) }, initial: { chosen: null } },
      actions: { remember: assign({ chosen: ({ event }: { event: { name?: string } }) => event.name ?? null }) },
      states: {
        asking: { tags: 'awaitsRequest', meta: { step: { page: 'second-factor', events: { 'x.go': object() } } }, on: { 'x.go': { target: 'checking', actions: 'remember' } } },
        checking: { tags: 'effect.check', on: { 'check.done': { target: CONTINUE, actions: assign({ chosen: 'x' }) } } },
      } as never,
      initial: 'asking',
    })
    expect(() => assertConfig(featureConfig({ extensions: [own] }))).not.toThrow()
  })
})

describe('the engine accepts a session only from the completion\'s issuing states', () => {
  it('refuses a session set by a crafted completion chart in a waiting state', async () => {
    const crafted = setup({}).createMachine({
      id: SIGN_IN_COMPLETION,
      version: '1',
      initial: 'idle',
      context: {},
      output: finalStateOutcome,
      states: {
        idle: { tags: 'awaitsRequest', on: { 'rogue.go': 'waiting' } },
        waiting: {
          tags: 'awaitsRequest',
          meta: { outcome: () => ({ type: 'step', session: { op: 'set', value: 'forged', expires: 2_000_000_000 } }) },
          on: {},
        },
      },
    })
    const flow = defineFlow({ machine: crafted, context: object(), effects: {} })
    const table: Route[] = [
      ...routes.filter((r) => r.action !== 'providers'),
      { method: 'GET', action: 'providers', provider: 'none', serve: { flow, params: object() as never, toEvent: (ctx) => ({ type: 'rogue.go', at: ctx.at }) } },
    ]
    const config = featureConfig()
    const response = await createHandler(table)(authRequest({ path: '/auth/providers' }), config)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=Configuration`)
    expect(response.headers.getSetCookie().some((c) => c.includes('session-token'))).toBe(false)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ code: 'ERR_FLOW_SESSION_REFUSED' }))
  })

  it('refuses a session set by a final state of the completion that no issuing state led to', async () => {
    const crafted = setup({}).createMachine({
      id: SIGN_IN_COMPLETION,
      version: '1',
      initial: 'idle',
      context: {},
      output: finalStateOutcome,
      states: {
        idle: { tags: 'awaitsRequest', on: { 'rogue.go': 'signedIn' } },
        signedIn: { type: 'final', output: () => ({ type: 'redirect', url: '/', session: { op: 'set', value: 'forged', expires: 2_000_000_000 } }) },
      },
    })
    const flow = defineFlow({ machine: crafted, context: object(), effects: {} })
    const table: Route[] = [
      ...routes.filter((r) => r.action !== 'providers'),
      { method: 'GET', action: 'providers', provider: 'none', serve: { flow, params: object() as never, toEvent: (ctx) => ({ type: 'rogue.go', at: ctx.at }) } },
    ]
    const config = featureConfig()
    const response = await createHandler(table)(authRequest({ path: '/auth/providers' }), config)
    expect(response.headers.getSetCookie().some((c) => c.includes('session-token'))).toBe(false)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ code: 'ERR_FLOW_SESSION_REFUSED' }))
  })
})

// The terms step through an OIDC sign-in is in insertion-points.test.ts, with its provider: these
// run without a server, so that the mutation group of the extensions can rerun them per mutant.
describe('the terms step', () => {
  function setup(version = '2026-01') {
    const store = createMemoryStore()
    const accepted = new Map<string, string>()
    const config = featureConfig({
      adapter: MemoryAdapter(store),
      extensions: [
        termsExtension({
          version,
          html: '<p>Be excellent to each other.</p>',
          acceptedVersion: (userId) => accepted.get(userId) ?? null,
          recordAcceptance: (userId, v) => void accepted.set(userId, v),
        }),
      ],
    })
    return { store, accepted, config }
  }

  const accept = async (client: Client) =>
    client.send({ path: '/step/signin-completion', body: { csrfToken: await client.csrfToken(), event: 'terms.accept' } })

  it('asks before the first session, records the version, and does not ask again', async () => {
    const { store, accepted, config } = setup()
    const client = new Client(config)
    const afterPassword = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(afterPassword.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    const page = await (await client.send({ path: '/step/signin-completion' })).text()
    expect(page).toContain('Be excellent to each other.')
    const done = await accept(client)
    expect(done.headers.get('location')).toBe(ORIGIN)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
    const [user] = [...store.users.values()]
    expect(accepted.get(user!.id)).toBe('2026-01')
    await client.signOut()
    const again = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(again.headers.get('location')).toBe(ORIGIN)
  })

  it('asks again when the terms change', async () => {
    const first = setup('2026-01')
    const client = new Client(first.config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    await accept(client)
    const next = featureConfig({ ...first.config, extensions: [termsExtension({ version: '2026-06', html: '<p>New.</p>', acceptedVersion: (id) => first.accepted.get(id) ?? null, recordAcceptance: () => {} })] })
    const later = new Client(next)
    const response = await later.signIn({ username: 'alice', password: 'wonderland' })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/step/signin-completion`)
  })

  it('refuses the sign-in when the user declines', async () => {
    const { store, config } = setup()
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const declined = await client.send({ path: '/step/signin-completion', body: { csrfToken: await client.csrfToken(), event: 'terms.decline' } })
    expect(declined.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied&code=terms.declined`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    expect(store.sessions.size).toBe(0)
    // The error page says what happened, not "You do not have permission to sign in".
    const page = await client.send({ path: '/error', query: { error: 'AccessDenied', code: 'terms.declined' } })
    expect(page.status).toBe(403)
    const html = await page.text()
    expect(html).toContain('<h1>Not signed in</h1>')
    expect(html).toContain('You declined the terms of service, so you are not signed in.')
    expect(html).not.toContain('You do not have permission')
  })

  it('comes after the second factor, never instead of it', async () => {
    const { config } = setup()
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    await accept(client)
    // Turn on two-step verification, sign out, sign in again: the code comes first.
    await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() } })
    const enrolPage = await (await client.send({ path: '/step/totp-enrolment' })).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(enrolPage)![1]!
    await client.send({ path: '/step/totp-enrolment', body: { csrfToken: await client.csrfToken(), code: totpCode(secret, Math.floor(Date.now() / 1000)) } })
    await client.signOut()
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const step = await (await client.send({ path: '/step/signin-completion' })).text()
    expect(step).toContain('Two-step verification')
    const accepted = await client.send({ path: '/step/signin-completion', body: { csrfToken: await client.csrfToken(), event: 'terms.accept' } })
    expect(accepted.status).toBe(400)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('refuses a terms answer without the CSRF token', async () => {
    const { config } = setup()
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const response = await client.send({ path: '/step/signin-completion', body: { event: 'terms.accept' } })
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=MissingCSRF`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('restarts, cleanly, a sign-in sealed by the chart before the extension was deployed', async () => {
    const base = setup()
    const before: AuthConfig = { ...base.config, logger: spyLogger(), extensions: [] }
    const after: AuthConfig = { ...base.config, logger: spyLogger(), extensions: [extension({ id: 'audit', effects: { check: async (_c, ctx) => ({ type: 'check.done', output: null, at: ctx.at }) } })] }
    const { config: withTerms } = base
    const client = new Client(withTerms)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    // The terms page waits; the deployment changes its extensions meanwhile.
    for (const changed of [before, after]) {
      const stale = await Auth(
        authRequest({ path: '/auth/step/signin-completion', body: { csrfToken: await client.csrfToken(), event: 'terms.accept' }, cookies: client.jar }),
        changed,
      )
      // A page that asks to sign in again, not an error: the user did nothing wrong.
      expect(stale.status).toBe(409)
      expect(await stale.text()).toContain('Please sign in again')
      expect(stale.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
      expect(changed.logger!.error).not.toHaveBeenCalled()
      expect(changed.logger!.warn).toHaveBeenCalledWith('flow-restarted-after-update')
    }
    // Logged as what it is: a flow of another version of the chart.
    expect(changedLog(before)).toContain(`envelope from version ${SIGN_IN_COMPLETION_VERSION}+terms@1, machine is ${SIGN_IN_COMPLETION_VERSION}`)
    expect(changedLog(after)).toContain(`envelope from version ${SIGN_IN_COMPLETION_VERSION}+terms@1, machine is ${SIGN_IN_COMPLETION_VERSION}+audit@1`)
  })
})

function changedLog(config: AuthConfig): string | undefined {
  const debug = (config.logger as unknown as { debug: { mock: { calls: [string, { reason?: string }?][] } } }).debug.mock.calls
  return debug.find(([message]) => message === 'flow-restarted-after-update')?.[1]?.reason
}
