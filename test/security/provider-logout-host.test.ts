/**
 * The logout routes under a forged request URL, over real HTTP (Express, proxy trust on as most
 * deployments behind a proxy have it): a forged `Host`, a forged `X-Forwarded-Host`, and an
 * absolute-form request target naming another host. The back-channel route judges a Logout Token
 * against the config that serves the request and nothing the request says about its host: a token
 * for another host's app (another client at the same provider) is refused, 400 with a JSON error,
 * and ends nothing. The front-channel route never redirects (a `callbackUrl` or `redirect` in its
 * query is ignored), names no forged host in what it answers, and ends only the session of the
 * browser whose cookie names that provider session.
 */
import type { Server } from 'node:http'
import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decode } from '../../core/jwt.js'
import { memoryAuthStore } from '../../core/store/index.js'
import { ExpressAuth } from '../../integrations/express/index.js'
import { CookieJar, SECRET, spyLogger } from '../fixtures/http.js'
import { startOidcProvider, visitProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { freePort } from '../fixtures/postgres.js'
import { rawRequest, type RawResponse } from '../fixtures/raw-http.js'
import { logoutToken } from '../oauth/logout-tokens.js'
import { appProvider, opClient } from '../oauth/helpers.js'

const EVIL = 'evil.example'
const SESSION_COOKIE = 'authjs.session-token'
const FORM = 'application/x-www-form-urlencoded'

let op: RunningOidcProvider
let server: Server
let port: number
let origin: string
const logger = spyLogger()

beforeAll(async () => {
  port = await freePort()
  origin = `http://127.0.0.1:${port}`
  op = await startOidcProvider({
    frontchannelLogout: true,
    clients: [
      await opClient('client_secret_basic', 'op', {
        redirect_uris: [`${origin}/auth/callback/op`],
        frontchannel_logout_uri: `${origin}/auth/frontchannel-logout/op`,
        frontchannel_logout_session_required: true,
      } as never),
    ],
  })
  const app = express()
  app.set('trust proxy', true)
  app.use(
    '/auth',
    ExpressAuth({
      secret: SECRET,
      trustHost: true,
      logger,
      store: memoryAuthStore(),
      providers: [appProvider(op.issuer, 'client_secret_basic', 'op')],
    } as never),
  )
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(port, '127.0.0.1', () => resolve(listening))
  })
})
afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  await op?.close()
})

/** A browser signed in through the provider over HTTP: its cookies, and its provider session `sid`. */
async function signedIn(): Promise<{ jar: CookieJar; sid: string }> {
  const jar = new CookieJar()
  const csrf = await fetch(`${origin}/auth/csrf`)
  jar.store(csrf)
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  const start = await fetch(`${origin}/auth/signin/op`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': FORM, origin },
    body: new URLSearchParams({ csrfToken, callbackUrl: `${origin}/` }),
  })
  jar.store(start)
  const answer = await visitProvider(start.headers.get('location')!, `${origin}/auth/callback/`)
  jar.store(await fetch(answer.url, { redirect: 'manual', headers: { cookie: jar.header() } }))
  const token = await decode({ token: jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })
  expect(token?.sid, 'the session records its provider session').toEqual(expect.any(String))
  return { jar, sid: token!.sid as string }
}

async function sessionOf(jar: CookieJar): Promise<unknown> {
  return (await fetch(`${origin}/auth/session`, { headers: { cookie: jar.header() } })).json()
}

/** The ways a request names another host than the one it reached. */
const forgeries: [string, (path: string) => { target: string; headers: Record<string, string> }][] = [
  ['a forged Host', (path) => ({ target: path, headers: { host: EVIL } })],
  ['a forged X-Forwarded-Host', (path) => ({ target: path, headers: { host: `127.0.0.1:${port}`, 'x-forwarded-host': EVIL } })],
  ['an absolute-form request target', (path) => ({ target: `http://${EVIL}${path}`, headers: { host: `127.0.0.1:${port}` } })],
]

/** The answer names no forged host and sends the browser nowhere. */
function expectNoOffHostAnswer(response: RawResponse): void {
  expect(response.status).toBeLessThan(500)
  expect(response.headers.get('location'), 'no redirect').toBeUndefined()
  expect(JSON.stringify([...response.headers]) + response.body).not.toContain(EVIL)
  for (const cookie of response.headers.get('set-cookie') ?? []) expect(cookie.toLowerCase()).not.toContain('domain=')
}

describe('back-channel logout under a forged request URL', () => {
  it.each(forgeries)("refuses another host's Logout Token under %s, and ends nothing", async (_name, forge) => {
    const { jar, sid } = await signedIn()
    // Signed by the provider, for the same provider session, but for another client: another host's app.
    const token = await logoutToken(op, 'another-hosts-client', sid)
    const { target, headers } = forge('/auth/backchannel-logout/op')
    const response = await rawRequest(port, {
      method: 'POST',
      target,
      headers: { ...headers, 'content-type': FORM },
      body: new URLSearchParams({ logout_token: token }).toString(),
    })
    expect(response.status).toBe(400)
    expect(JSON.parse(response.body)).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('aud') })
    expectNoOffHostAnswer(response)
    expect(await sessionOf(jar), 'no session touched').not.toBeNull()
  })

  it.each(forgeries)('judges our own Logout Token on our config alone under %s', async (_name, forge) => {
    const { jar, sid } = await signedIn()
    const { target, headers } = forge('/auth/backchannel-logout/op')
    const response = await rawRequest(port, {
      method: 'POST',
      target,
      headers: { ...headers, 'content-type': FORM },
      body: new URLSearchParams({ logout_token: await logoutToken(op, 'op', sid) }).toString(),
    })
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body)).toEqual({})
    expectNoOffHostAnswer(response)
    expect(await sessionOf(jar), 'the provider ended it').toBeNull()
  })
})

describe('front-channel logout under a forged request URL', () => {
  const query = (sid: string) =>
    `?${new URLSearchParams({ iss: op.issuer, sid, callbackUrl: `https://${EVIL}/`, redirect: `https://${EVIL}/`, post_logout_redirect_uri: `https://${EVIL}/` })}`

  it.each(forgeries)('never redirects, and ends nothing for a request without the session cookie, under %s', async (_name, forge) => {
    const { jar, sid } = await signedIn()
    const response = await rawRequest(port, forge(`/auth/frontchannel-logout/op${query(sid)}`))
    expect(response.status).toBe(200)
    expect(response.body).toContain('There was no session to end here.')
    expectNoOffHostAnswer(response)
    expect(await sessionOf(jar), "another browser's session stays").not.toBeNull()
  })

  it.each(forgeries)("ends nothing for this browser's cookie with another provider session under %s", async (_name, forge) => {
    const { jar } = await signedIn()
    const { target, headers } = forge(`/auth/frontchannel-logout/op${query('another-sid')}`)
    const response = await rawRequest(port, { target, headers: { ...headers, cookie: jar.header() } })
    expect(response.status).toBe(200)
    expect(response.body).toContain('There was no session to end here.')
    expectNoOffHostAnswer(response)
    expect(await sessionOf(jar)).not.toBeNull()
  })

  it.each(forgeries)('ends the matching session in its own browser, and still sends it nowhere, under %s', async (_name, forge) => {
    const { jar, sid } = await signedIn()
    const { target, headers } = forge(`/auth/frontchannel-logout/op${query(sid)}`)
    const response = await rawRequest(port, { target, headers: { ...headers, cookie: jar.header() } })
    expect(response.status).toBe(200)
    expect(response.body).toContain('You are signed out.')
    expectNoOffHostAnswer(response)
    expect(await sessionOf(jar), 'the provider session it names has ended').toBeNull()
  })
})
