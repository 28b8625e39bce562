/**
 * The live flow inspector: off unless enabled, refused in production, highlights what requests
 * did, and never shows a secret, token or cookie value (checked against a real OAuth sign-in with
 * refreshable tokens in the session, a credentials sign-in and session reads).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Auth } from '../../core/index.js'
import type { FlowTrace } from '../../core/engine/trace.js'
import { decode } from '../../core/jwt.js'
import { authRequest, Client, SECRET, featureConfig } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, CALLBACK_BASE, CLIENT_SECRET, opClient, startSignIn, deliverCallback } from '../oauth/helpers.js'
import { visitProvider } from '../fixtures/oidc-provider.js'
import { flowInspector } from '../../core/inspector.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
let op: RunningOidcProvider
beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_post', 'op')], refreshTokens: true })
})
afterAll(() => op?.close())
const nodeEnv = process.env.NODE_ENV
afterEach(() => {
  process.env.NODE_ENV = nodeEnv
})

// The developer's browser on the same machine: the inspector answers loopback clients only
// (test/security/inspector-exposure.test.ts).
const inspectorPage = (config: object) =>
  Auth(authRequest({ path: '/auth/__flows', origin: 'http://localhost:3000' }), config as Parameters<typeof Auth>[1])

describe('the flow inspector', () => {
  it('is off unless enabled: the path is not an action', async () => {
    const response = await inspectorPage(featureConfig())
    expect(response.status).toBe(400)
  })

  it('is refused in production even when enabled, with a warning', async () => {
    process.env.NODE_ENV = 'production'
    const config = featureConfig({ inspector: flowInspector() })
    const response = await inspectorPage(config)
    expect(response.status).toBe(404)
    expect(await response.text()).toBe('')
    expect(config.logger.warn).toHaveBeenCalledWith('inspector-refused-in-production')
  })

  it("shows each configured flow's chart and highlights the transitions requests took, with counts", async () => {
    const config = featureConfig({ inspector: flowInspector() })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    await client.signIn({ username: 'alice', password: 'wrong' })
    // Graphviz writes '-' in attribute values as &#45;, which the browser decodes.
    const html = (await (await inspectorPage(config)).text()).replace(/&#45;/g, '-')
    expect(html).toContain('data-flow="session"')
    expect(html).toContain('data-flow="credentials-signin"')
    expect(html).not.toContain('data-flow="oauth-signin"')
    // idle → authorizing was taken twice; the rejection once.
    expect(html).toMatch(/id="transition:credentials-signin:credentials-signin\.idle:credentials\.submit:0"[^]*?×2/)
    expect(html).toContain('POST /callback/credentials')
    expect(html).toContain('data-flow="signin-completion"')
    // The first factor's run, then the completion it handed the user to.
    expect(html).toMatch(/<td>admitAttempt → authorize<\/td><td>verified · handoff<\/td>/)
    expect(html).toMatch(/checkSignIn → findSecondFactor → prepareSession → issueSession → emitSignInEvent/)
    expect(html).toMatch(/authorize<\/td><td>rejected · error:CredentialsSignin/)
  })

  it('never shows a secret, token or cookie value, in the page or in a trace', async () => {
    const traces: FlowTrace[] = []
    const config = featureConfig({
      inspector: flowInspector({ traces: 100 }),
      inspect: (trace) => traces.push(trace),
      providers: [
        ...featureConfig().providers,
        appProvider(op.issuer, 'client_secret_post', 'op', { checks: ['pkce', 'state', 'nonce'], refreshTokens: true }),
      ] as never,
    })
    const secrets = new Set<string>([SECRET, CLIENT_SECRET, 'wonderland'])

    const client = new Client(config)
    secrets.add(await client.csrfToken())
    const authorizationUrl = new URL(await startSignIn(client, 'op', { query: { login_hint: 'alice-hint-value' } }))
    for (const name of ['state', 'nonce', 'code_challenge']) secrets.add(authorizationUrl.searchParams.get(name)!)
    secrets.add('alice-hint-value')
    const answer = await visitProvider(authorizationUrl.href, CALLBACK_BASE)
    secrets.add(answer.url.searchParams.get('code')!)
    for (const value of client.jar.cookies.values()) secrets.add(value)
    await deliverCallback(client, answer)
    const token = (await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE }))!
    const tokens = token.oauth as Record<string, string>
    secrets.add(tokens.access_token!).add(tokens.refresh_token!)
    await client.session()
    await client.signIn({ username: 'alice', password: 'wonderland' })
    for (const value of client.jar.cookies.values()) secrets.add(value)

    const html = await (await inspectorPage(config)).text()
    expect(html).toContain('data-flow="oauth-signin"')
    expect(html).toContain('GET /callback/op')
    // sign-in start, callback (OAuth, then the completion), session read, credentials sign-in
    // (the first factor, then the completion)
    expect(traces.map((t) => t.flow)).toEqual([
      'oauth-signin',
      'oauth-signin',
      'signin-completion',
      'session',
      'credentials-signin',
      'signin-completion',
    ])
    const recorded = JSON.stringify(traces)
    for (const secret of secrets) {
      if (secret.length < 8) continue
      expect(html.includes(secret), `the page shows ${secret.slice(0, 12)}…`).toBe(false)
      expect(recorded.includes(secret), `a trace holds ${secret.slice(0, 12)}…`).toBe(false)
    }
    expect(secrets.size).toBeGreaterThanOrEqual(12)
  })
})
