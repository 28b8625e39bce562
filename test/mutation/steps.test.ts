/**
 * The step routes (`GET`/`POST {basePath}/step/<flow>`) on the memory adapter and store, fast
 * enough to run for every mutant of `core/http/steps.ts`: which answer a waiting state takes (the
 * event the body names, the fields its struct accepts, coerced and nothing else), what a step page
 * sees (an extension's page, its view), the flows refused without a sealed flow, and the
 * confirmation page a re-authentication resumes the action from.
 */
import { coerce, nullable, number, object, refine, string } from 'superstruct'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { assign, createActor, createMachine } from 'xstate'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { CONTINUE, DENY, runs, waitsFor, type FlowExtension, type StepView } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { stepEvent } from '../../core/http/steps.js'
import { RequestError } from '../../core/errors.js'
import { ALICE, Client, credentialsProvider, ORIGIN, testConfig, featureConfig } from '../fixtures/http.js'
import { ISSUER, standIn, standInProvider } from './oauth-standin.js'

const STEP = '/step/signin-completion'
const SESSION_COOKIE = '__Secure-authjs.session-token'

/**
 * A survey before the session: a rating (a number, sent as form text), a detail (a nested field,
 * sent as JSON), a skip, and an answer its struct never accepts. Its page records each view it is
 * given and shows the survey's own field.
 */
function survey(views: StepView[]): FlowExtension {
  return defineExtension({
    id: 'survey',
    version: '1',
    at: 'beforeSession',
    initial: 'asking',
    context: { schema: { rating: nullable(number()) }, initial: { rating: null } },
    states: {
      asking: waitsFor('survey', {
        'survey.rate': { input: object({ rating: coerce(number(), string(), Number) }), target: CONTINUE, actions: 'rememberRating' },
        'survey.detail': { input: object({ detail: object({ text: string() }) }), target: CONTINUE },
        'survey.never': { input: refine(object(), 'never', () => false), target: CONTINUE },
        'survey.skip': { target: DENY },
      }),
    },
    actions: {
      rememberRating: assign({ rating: ({ event }: { event: { rating?: number } }) => event.rating ?? null }),
    },
    pages: {
      survey: (view) => {
        views.push(view)
        return { title: 'Survey', html: `<p>How was it?</p><p>rating ${String(view.data.rating)}</p>` }
      },
    },
  })
}

/** An extension with no page of its own, before the survey: a step's page is looked up past it. */
const pageless = defineExtension({
  id: 'pageless',
  version: '1',
  at: 'beforeSession',
  initial: 'noting',
  states: { noting: runs('note', { done: CONTINUE }) },
  effects: { note: () => null },
})

/** Alice signed in with her password, her sign-in waiting on the survey. */
async function atSurvey(strategy: 'jwt' | 'database' = 'jwt') {
  const views: StepView[] = []
  const store = createMemoryStore()
  const config = featureConfig({ adapter: MemoryAdapter(store), session: { strategy }, extensions: [pageless, survey(views)] })
  const client = new Client(config)
  expect((await client.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
  return { config, client, views, store }
}

async function answer(client: Client, fields: Record<string, string>): Promise<Response> {
  return client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), ...fields } })
}

const loggedErrors = (config: ReturnType<typeof testConfig>) => config.logger.error.mock.calls.map(([error]) => (error as Error).message)

afterEach(() => {
  vi.useRealTimers()
})

describe('a step page', () => {
  it("is an extension's own page when the flow has none of that name, shown the user, the form and no error", async () => {
    const { client, views } = await atSurvey()
    const page = await client.send({ path: STEP })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('<title>Survey')
    expect(html).toContain('<p>rating null</p>')
    expect(views).toHaveLength(1)
    expect(views[0]).toMatchObject({
      action: `${ORIGIN}/auth${STEP}`,
      csrfToken: await client.csrfToken(),
      error: null,
      user: { name: ALICE.name, email: ALICE.email, image: ALICE.image },
      data: { rating: null },
    })
  })

  it('shows null for what the user lacks (no name, no picture), never a missing field', async () => {
    const views: StepView[] = []
    const config = featureConfig({
      extensions: [survey(views)],
      providers: [
        credentialsProvider(() => ({ id: 'u-2', email: 'bob@example.com' })),
      ],
    })
    const client = new Client(config)
    await client.signIn({ username: 'bob', password: 'x' })
    await client.send({ path: STEP })
    expect(views[0]!.user).toStrictEqual({ name: null, email: 'bob@example.com', image: null })
  })
})

describe('an answer to a step', () => {
  it('takes the named event with its field coerced from the form text, leaving out fields the event does not take', async () => {
    const { client, store } = await atSurvey('database')
    const taken = await answer(client, { event: 'survey.rate', rating: '4', extra: 'ignored' })
    expect(taken.headers.get('location')).toBe(ORIGIN)
    expect(store.sessions.get(client.jar.get(SESSION_COOKIE)!)).toBeDefined()
  })

  it('names its event when the step takes more than one: without a name it is refused, whatever its fields', async () => {
    const { client, config } = await atSurvey()
    const unnamed = await answer(client, { rating: '4' })
    expect(unnamed.status).toBe(400)
    expect(loggedErrors(config)).toContain('Unknown step event')
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('is refused for an event the step does not take, saying so in the log', async () => {
    const { client, config } = await atSurvey()
    expect((await answer(client, { event: 'survey.unknown', rating: '4' })).status).toBe(400)
    expect(loggedErrors(config)).toContain('Unknown step event')
  })

  it('is refused where its fields do not fit, naming the nested field, or the body as a whole', async () => {
    const { client, config } = await atSurvey()
    const csrfToken = await client.csrfToken()
    const nested = await client.send({ path: STEP, json: { csrfToken, event: 'survey.detail', detail: { text: 7 } } })
    expect(nested.status).toBe(400)
    expect(loggedErrors(config)).toContain('Invalid input at detail.text')
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
    const whole = await atSurvey()
    expect((await answer(whole.client, { event: 'survey.never' })).status).toBe(400)
    expect(loggedErrors(whole.config)).toContain('Invalid input at body')
  })
})

describe('stepEvent, on a snapshot', () => {
  const step = { page: 'p', events: { 'x.go': object({ n: coerce(number(), string(), Number) }) } }
  const ctx = (body: Record<string, unknown>) => ({ request: { body }, at: 42 }) as never

  it("reads the step of the state it waits in, past the parents' metas that declare none", () => {
    const machine = createMachine({
      id: 'm',
      initial: 'outer',
      states: {
        outer: {
          meta: null,
          initial: 'middle',
          states: { middle: { meta: { outcome: 'page' }, initial: 'inner', states: { inner: { meta: { step } } } } },
        },
      },
    })
    const snapshot = createActor(machine).getSnapshot()
    expect(Object.values(snapshot.getMeta())).toEqual([null, { outcome: 'page' }, { step }])
    expect(stepEvent(ctx({ n: '3' }), snapshot)).toEqual({ type: 'x.go', n: 3, at: 42 })
  })

  it('refuses an answer to a flow that waits in no step', () => {
    const machine = createMachine({ id: 'm', initial: 'idle', states: { idle: { meta: { outcome: 'page' } } } })
    const snapshot = createActor(machine).getSnapshot()
    expect(() => stepEvent(ctx({ n: '3' }), snapshot)).toThrow(new RequestError('The flow is not waiting for an answer'))
  })
})

describe('the step routes without a flow to resume', () => {
  it('answer a flow that is no step flow with 404, naming it in the log', async () => {
    const config = featureConfig()
    const response = await new Client(config).send({ path: '/step/no-such-flow' })
    expect(response.status).toBe(404)
    expect(loggedErrors(config)).toContain('No step of a flow "no-such-flow"')
  })

  it("report the flow's own refusal: a re-authentication without its flow is denied and counted as failed", async () => {
    const config = featureConfig()
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const refused = await client.send({ path: '/step/reauthenticate', body: { csrfToken: await client.csrfToken(), event: 'reauth.password', password: 'x' } })
    expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-failed')
  })

  it('report the flow-state error for a flow without a refusal of its own', async () => {
    const config = featureConfig()
    const client = new Client(config)
    const refused = await client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), code: '123456' } })
    expect(refused.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=FlowExpired`)
    const logged = config.logger.error.mock.calls.map(([error]) => `${(error as Error).name}: ${(error as Error).message}`)
    expect(logged).toEqual(['FlowStateError: signin-completion: no flow to resume'])
  })
})

describe('the page a re-authentication resumes the action from', () => {
  it('is titled Confirmed, names the action, and posts it on with the CSRF token', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const config = featureConfig({ adapter: MemoryAdapter(createMemoryStore()) })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    vi.setSystemTime(Date.now() + 11 * 60 * 1000)
    const asked = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() }, headers: { accept: 'text/html' } })
    expect(asked.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
    const csrfToken = await client.csrfToken()
    const resumed = await client.send({
      path: '/step/reauthenticate',
      body: { csrfToken, event: 'reauth.password', username: 'alice', password: 'wonderland' },
      headers: { accept: 'text/html' },
    })
    expect(resumed.status).toBe(200)
    expect(resumed.headers.get('x-frame-options')).toBe('DENY')
    const html = await resumed.text()
    expect(html).toContain('<title>Confirmed')
    expect(html).toContain('Going on to turn on two-step verification')
    expect(html).toContain(`name="csrfToken" value="${csrfToken}"`)
  })
})

describe('the two-step settings page', () => {
  it('carries the CSRF token its forms post with', async () => {
    const config = featureConfig({ adapter: MemoryAdapter(createMemoryStore()) })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const csrfToken = await client.csrfToken()
    expect(await (await client.send({ path: '/two-factor' })).text()).toContain(`name="csrfToken" value="${csrfToken}"`)
  })
})

describe("the provider's front-channel logout page", () => {
  it('is the page the provider frames (no frame refusal), saying there was no session to end', async () => {
    const op = standIn()
    const config = featureConfig({
      adapter: MemoryAdapter(createMemoryStore()),
      providers: [credentialsProvider(), standInProvider(op, { frontchannelLogout: true })] as never,
    })
    const page = await new Client(config).send({ path: '/frontchannel-logout/standin', query: { iss: ISSUER, sid: 'no-such-sid' } })
    expect(page.headers.get('x-frame-options')).toBeNull()
    expect(await page.text()).toContain('There was no session to end here.')
    expect(config.logger.error).not.toHaveBeenCalled()
  })
})
