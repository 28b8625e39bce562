/**
 * A flow that rests between requests (a second step after a first), served through a handler
 * with two extra routes: the resting flow travels in a sealed cookie and is refused, with a logged
 * reason and never a 5xx, when that cookie is tampered with, missing, expired, foreign or stale.
 */
import { number, object, optional, string, unknown } from 'superstruct'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { assign, setup } from 'xstate'
import { createHandler } from '../../core/auth.js'
import { defineFlow } from '../../core/engine/flow.js'
import { FlowStateError } from '../../core/errors.js'
import type { RequestContext } from '../../core/http/context.js'
import { routesOf, type Route } from '../../core/http/routes.js'
import type { FlowOutcome } from '../../machines/shared/outcome.js'
import { authRequest, CookieJar, ORIGIN, setCookie, testConfig } from '../fixtures/http.js'
import { everyFlow } from '../../core/flows/catalogue.js'

/** Every route authchart ships: the built-in flows' and the optional features'. */
const routes = routesOf(everyFlow)

const toSecondStep = (): FlowOutcome => ({ type: 'redirect', url: `${ORIGIN}/second-step` })
const toDone = ({ context }: { context: { user: string } }): FlowOutcome => ({
  type: 'json',
  body: { user: context.user },
})
const passThrough = ({ event }: { event: { output?: unknown } }) => event.output as FlowOutcome

function twoStepFlow(version = '1', id = 'two-step') {
  const machine = setup({
    types: {} as {
      context: { user: string; started: number }
      events: { type: 'two.start'; user: string; at: number } | { type: 'two.finish'; at: number }
    },
    actions: {
      rememberUser: assign(({ event }) =>
        event.type === 'two.start' ? { user: event.user, started: event.at } : {},
      ),
    },
  }).createMachine({
    id,
    version,
    initial: 'idle',
    context: { user: '', started: 0 },
    output: passThrough,
    states: {
      idle: { tags: 'awaitsRequest', on: { 'two.start': { target: 'waiting', actions: 'rememberUser' } } },
      waiting: { tags: 'awaitsRequest', meta: { outcome: toSecondStep }, on: { 'two.finish': 'done' } },
      done: { type: 'final', output: toDone },
    },
  })
  return defineFlow<typeof machine, RequestContext>({
    machine,
    context: object({ user: string(), started: number() }),
    effects: {},
  })
}

function handlerFor(flow: ReturnType<typeof twoStepFlow>) {
  const extra: Route[] = [
    {
      method: 'POST',
      action: 'signin',
      provider: 'credentials',
      serve: {
        flow,
        params: object({ user: string(), csrfToken: optional(unknown()) }),
        toEvent: (ctx: RequestContext, body: { user: string }) => ({ type: 'two.start', user: body.user, at: ctx.at }),
      } as never,
    },
    {
      method: 'GET',
      action: 'callback',
      provider: 'credentials',
      serve: {
        flow,
        params: optional(unknown()),
        toEvent: (ctx: RequestContext) => ({ type: 'two.finish', at: ctx.at }),
        resumes: true,
      } as never,
    },
  ]
  // The test routes come first, so they win over the built-in POST /signin/credentials.
  return createHandler([...extra, ...routes])
}

const COOKIE = '__Secure-authchart.flow.two-step'

async function start(handler = handlerFor(twoStepFlow()), config = testConfig()) {
  const jar = new CookieJar()
  const response = await handler(authRequest({ path: '/auth/signin/credentials', body: { user: 'alice' }, cookies: jar }), config)
  jar.store(response)
  return { response, jar, config }
}

async function finish(jar: CookieJar, handler = handlerFor(twoStepFlow()), config = testConfig()) {
  return handler(authRequest({ path: '/auth/callback/credentials', cookies: jar }), config)
}

function expectRefused(response: Response, config: ReturnType<typeof testConfig>, code: string) {
  expect(response.status).toBe(302)
  // A flow that is only gone (missing, expired) asks the user to start again; anything else is ours.
  const gone = code === 'ERR_FLOW_STATE_MISSING' || code === 'ERR_FLOW_STATE_STALE'
  expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=${gone ? 'FlowExpired' : 'Configuration'}`)
  const logged = config.logger.error.mock.calls.map(([error]) => error)
  expect(logged).toEqual([expect.any(FlowStateError)])
  expect(logged[0].code).toBe(code)
}

afterEach(() => {
  vi.useRealTimers()
})

describe('a flow resting between requests', () => {
  it('answers the resting state and seals the flow in an HttpOnly cookie', async () => {
    const { response, jar } = await start()
    expect(response.headers.get('location')).toBe(`${ORIGIN}/second-step`)
    const cookie = setCookie(response, COOKIE)!
    expect(cookie.attributes).toMatchObject({ httponly: true, secure: true, path: '/', 'max-age': '900' })
    expect(cookie.value.split('.')).toHaveLength(5)
    expect(cookie.value).not.toContain('alice')
    expect(jar.get(COOKIE)).toBeDefined()
  })

  it('resumes from the sealed state on the next request and deletes the cookie', async () => {
    const { jar } = await start()
    const response = await finish(jar)
    expect(await response.json()).toEqual({ user: 'alice' })
    expect(setCookie(response, COOKIE)?.attributes['max-age']).toBe('0')
  })

  it('refuses a tampered cookie with a logged reason', async () => {
    const { jar } = await start()
    const sealed = jar.get(COOKIE)!
    const parts = sealed.split('.')
    parts[3] = `${parts[3]![0] === 'A' ? 'B' : 'A'}${parts[3]!.slice(1)}`
    jar.cookies.set(COOKIE, parts.join('.'))
    const config = testConfig()
    expectRefused(await finish(jar, undefined, config), config, 'ERR_FLOW_STATE_INVALID')
  })

  it('refuses a missing cookie', async () => {
    const config = testConfig()
    expectRefused(await finish(new CookieJar(), undefined, config), config, 'ERR_FLOW_STATE_MISSING')
  })

  it('refuses an expired cookie as stale', async () => {
    const { jar } = await start()
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 16 * 60 * 1000)
    const config = testConfig()
    expectRefused(await finish(jar, undefined, config), config, 'ERR_FLOW_STATE_STALE')
  })

  it('restarts a flow sealed by an older version of the machine with a page that says so, never an error', async () => {
    const { jar } = await start(handlerFor(twoStepFlow('1')))
    const config = testConfig()
    const response = await finish(jar, handlerFor(twoStepFlow('2')), config)
    expect(response.status).toBe(409)
    const html = await response.text()
    expect(html).toContain('This sign-in was started before the site was updated')
    expect(html).toContain(`href="${ORIGIN}/auth/signin"`)
    expect(setCookie(response, COOKIE)?.attributes['max-age']).toBe('0')
    expect(config.logger.error).not.toHaveBeenCalled()
    expect(config.logger.warn).toHaveBeenCalledWith('flow-restarted-after-update')
  })

  it('resumes a flow sealed by an older version through the migration the new version declares', async () => {
    const { jar } = await start(handlerFor(twoStepFlow('1')))
    const v2 = twoStepFlow('2')
    const migrated = defineFlow({ ...v2, migrations: { '1': (sealed) => sealed } })
    const response = await finish(jar, handlerFor(migrated))
    expect(await response.json()).toEqual({ user: 'alice' })
  })

  it("refuses another flow's envelope moved into this flow's cookie", async () => {
    const other = handlerFor(twoStepFlow('1', 'other-flow'))
    const { jar } = await start(other)
    jar.cookies.set(COOKIE, jar.get('__Secure-authchart.flow.other-flow')!)
    const config = testConfig()
    expectRefused(await finish(jar, undefined, config), config, 'ERR_FLOW_STATE_INVALID')
  })

  it('refuses a cookie sealed with a secret the app no longer has', async () => {
    const { jar } = await start(undefined, testConfig({ secret: 'a-retired-secret-that-is-long-enough-00000' }))
    const config = testConfig()
    expectRefused(await finish(jar, undefined, config), config, 'ERR_FLOW_STATE_INVALID')
  })
})
