/**
 * A rolling upgrade: e-mail code sign-ins started on version N of the deployment (the built-in
 * routes) finish on version N+1, whose e-mail chart changed. A compatible change (a declared
 * migration from N's chart) completes the flow in flight; an incompatible one (no migration)
 * restarts it with a page that says so and keeps the callback URL, never an error and never a
 * loop. Sessions and CSRF cookies cross the versions untouched.
 */
import { describe, expect, it } from 'vitest'
import { createMachine, type AnyStateMachine } from 'xstate'
import { emailSignInMachine } from '../../machines/email-signin.machine.js'
import { createHandler } from '../../core/auth.js'
import { defineFlow, type FlowMigration } from '../../core/engine/flow.js'
import { emailSignInFlow } from '../../core/flows/email/flow.js'
import { lazyFlow } from '../../core/flows/kinds.js'
import type { RequestContext } from '../../core/http/context.js'
import { routesOf, type Route } from '../../core/http/routes.js'
import type { AuthConfig } from '../../core/types.js'
import { emailConfig, EmailClient } from '../email/helpers.js'
import { authRequest, ORIGIN, setCookie } from '../fixtures/http.js'
import { everyFlow } from '../../core/flows/catalogue.js'

/** Every route authchart ships: the built-in flows' and the optional features'. */
const routes = routesOf(everyFlow)

const FLOW_COOKIE = '__Secure-authchart.flow.email-signin'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const CALLBACK = `${ORIGIN}/dashboard`

/** Renames every key and target `from` to `to` in a chart's config, functions kept as they are. */
function renamed(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value === from ? to : value
  if (Array.isArray(value)) return value.map((item) => renamed(item, from, to))
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key === from ? to : key, renamed(item, from, to)]),
  )
}

/** Version N+1 of the e-mail chart: the state waiting for the code is renamed (an incompatible change). */
function nextEmailMachine(): AnyStateMachine {
  const config = renamed(emailSignInMachine.config, 'awaitingCode', 'waitingForCode') as typeof emailSignInMachine.config
  return createMachine({ ...config, version: `${emailSignInMachine.version}-next` }, emailSignInMachine.implementations as never)
}

/** A deployment whose e-mail flow is `flow`: the built-in routes, that one flow swapped. */
function deployment(flow: typeof emailSignInFlow) {
  const table = routes.map((route): Route =>
    route.provider === 'email' && typeof route.serve !== 'function'
      ? ({ ...route, serve: { ...route.serve, flow } } as Route)
      : route,
  )
  // The e-mail routes: asking for a code, the link and the code's callback.
  expect(table.filter((route, i) => route !== routes[i])).toHaveLength(3)
  return createHandler(table)
}

const versionN = deployment(emailSignInFlow)

/**
 * Version N+1, its e-mail flow declaring `migrations`. `onDemand`: the routes hold it as the
 * built-in ones hold the e-mail flow, through the loaded module (`lazyFlow`), not as a definition.
 */
function versionNPlus1(migrations?: Record<string, FlowMigration>, { onDemand = false } = {}) {
  const flow = defineFlow<AnyStateMachine, RequestContext>({
    ...emailSignInFlow,
    machine: nextEmailMachine(),
    ...(migrations ? { migrations } : {}),
  })
  return deployment((onDemand ? lazyFlow('email', () => flow) : flow) as typeof emailSignInFlow)
}

/** N+1's migration from N: the state waiting for the code was renamed. */
const fromN: Record<string, FlowMigration> = {
  [emailSignInMachine.version!]: ({ value, context }) => ({
    value: value === 'awaitingCode' ? 'waitingForCode' : value,
    context,
  }),
}

/** A client that sends through `handler` (switchable: the load balancer moves it to N+1). */
class UpgradingClient extends EmailClient {
  handler = versionN
  override async send(init: Parameters<EmailClient['send']>[0]): Promise<Response> {
    const response = await this.handler(
      authRequest({ ...init, path: `${this.basePath}${init.path}`, cookies: this.jar, origin: this.origin }),
      this.config as Omit<AuthConfig, 'raw'>,
    )
    this.jar.store(response)
    return response
  }
}

/** Asks for a code on version N: the flow rests in its cookie, sealed by N's chart. */
async function codeRequestedOnN() {
  const { config, outbox } = emailConfig({ provider: { code: true } })
  const client = new UpgradingClient(config)
  const asked = await client.requestLink('alice@example.com', { callbackUrl: CALLBACK })
  expect(asked.headers.get('location')).toContain('/verify-request')
  expect(client.jar.get(FLOW_COOKIE)).toBeDefined()
  return { client, code: outbox.at(-1)!.code!, config, outbox }
}

describe('an e-mail code sign-in in flight across a deploy', () => {
  it('finishes on N+1 when the chart did not change', async () => {
    const { client, code } = await codeRequestedOnN()
    client.handler = deployment(emailSignInFlow)
    const done = await client.enterCode(code)
    expect(done.headers.get('location')).toBe(CALLBACK)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('finishes on N+1 when the chart changed compatibly: N+1 declares a migration from N', async () => {
    const { client, code } = await codeRequestedOnN()
    client.handler = versionNPlus1(fromN)
    const done = await client.enterCode(code)
    expect(done.headers.get('location')).toBe(CALLBACK)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('finishes on N+1 through the flow loaded on demand, as the built-in routes hold it: its migration is not lost', async () => {
    const { client, code } = await codeRequestedOnN()
    client.handler = versionNPlus1(fromN, { onDemand: true })
    const done = await client.enterCode(code)
    expect(done.status).toBe(302)
    expect(done.headers.get('location')).toBe(CALLBACK)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('restarts on N+1 when the chart changed incompatibly: a page that says so, the callback URL kept, no loop', async () => {
    const { client, code, outbox, config } = await codeRequestedOnN()
    client.handler = versionNPlus1()
    const restarted = await client.enterCode(code)
    expect(restarted.status).toBe(409)
    const html = await restarted.text()
    expect(html).toContain('Please sign in again')
    const again = new URL(/<a class="button" href="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&'))
    expect(again.href).toBe(`${ORIGIN}/auth/signin?callbackUrl=${encodeURIComponent(CALLBACK)}`)
    // The stale flow is forgotten: a second submit is not answered with the same page again.
    expect(setCookie(restarted, FLOW_COOKIE)?.attributes['max-age']).toBe('0')
    expect(client.jar.get(FLOW_COOKIE)).toBeUndefined()
    expect(config.logger.error).not.toHaveBeenCalled()
    // Starting again on N+1 signs in and lands where the first try was going.
    expect((await client.send({ path: '/signin', query: { callbackUrl: again.searchParams.get('callbackUrl')! } })).status).toBe(200)
    await client.requestLink('alice@example.com', { callbackUrl: again.searchParams.get('callbackUrl')! })
    expect(outbox.at(-1)!.code).not.toBe(code)
    const done = await client.enterCode(outbox.at(-1)!.code!)
    expect(done.headers.get('location')).toBe(CALLBACK)
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('keeps sessions and CSRF cookies across the versions', async () => {
    const { client, code } = await codeRequestedOnN()
    const csrfCookie = client.jar.get('__Host-authjs.csrf-token')
    expect(csrfCookie).toBeDefined()
    await client.enterCode(code)
    const session = client.jar.get(SESSION_COOKIE)
    client.handler = versionNPlus1()
    // The session made on N reads on N+1, and the CSRF cookie minted on N is accepted by N+1.
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
    const csrfToken = await client.csrfToken()
    expect(client.jar.get('__Host-authjs.csrf-token')).toBe(csrfCookie)
    const signedOut = await client.send({ path: '/signout', body: { csrfToken } })
    expect(signedOut.status).toBe(302)
    expect(signedOut.headers.get('location')).not.toContain('error=')
    expect(session).toBeDefined()
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })
})
