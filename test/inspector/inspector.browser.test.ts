/**
 * The inspector in a real browser: a Fastify app on loopback serves it after real sign-ins
 * (credentials, and OIDC against the real provider); headless Chromium opens it, takes a
 * screenshot, and every state of each configured machine is drawn in its SVG.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fastifyAuth } from '../../integrations/fastify/index.js'
import { credentialsSignInMachine, oauthSignInMachine, sessionMachine } from '../../machines/index.js'
import { stateElementId } from '../../visualizations/dot.js'
import { flowGraph } from '../../visualizations/graph.js'
import { launchChromium } from '../fixtures/chromium.js'
import { credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient } from '../oauth/helpers.js'

let app: FastifyInstance
let origin: string
let op: RunningOidcProvider
let browser: Browser
const shots = mkdtempSync(join(tmpdir(), 'authchart-inspector-'))

beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
  app = Fastify()
  await app.register(fastifyAuth, {
    secret: SECRET,
    trustHost: true,
    inspector: true,
    logger: spyLogger(),
    providers: [credentialsProvider(), appProvider(op.issuer, 'client_secret_basic', 'op')],
  } as never)
  origin = await app.listen({ port: 0, host: '127.0.0.1' })
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await op?.close()
  rmSync(shots, { recursive: true, force: true })
})

describe('the flow inspector in Chromium', () => {
  it('draws every state of every configured flow, with the traces of real requests', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    // A real sign-in in the browser: the built-in page's credentials form.
    await page.goto(`${origin}/auth/signin`)
    await page.fill('input[name="username"]', 'alice')
    await page.fill('input[name="password"]', 'wonderland')
    await Promise.all([page.waitForURL(`${origin}/`), page.click('form[action$="/callback/credentials"] button')])
    await page.goto(`${origin}/auth/session`)

    const response = await page.goto(`${origin}/auth/__flows`)
    expect(response?.status()).toBe(200)
    const screenshot = join(shots, 'inspector.png')
    await page.screenshot({ path: screenshot, fullPage: true })
    expect(statSync(screenshot).size).toBeGreaterThan(50_000)

    for (const machine of [sessionMachine, credentialsSignInMachine, oauthSignInMachine]) {
      const drawn = await page.$$eval(`section[data-flow="${machine.id}"] svg g.node`, (nodes) =>
        nodes.map((node) => node.id),
      )
      const states = flowGraph(machine).states.map((s) => stateElementId(machine.id, s.id))
      expect(drawn, `${machine.id} draws every state`).toEqual(expect.arrayContaining(states))
      const visible = await page.locator(`section[data-flow="${machine.id}"] svg`).isVisible()
      expect(visible).toBe(true)
    }
    const traces = await page.$$eval('tr.trace', (rows) => rows.map((row) => row.textContent ?? ''))
    expect(traces.some((t) => t.includes('POST /callback/credentials') && t.includes('signedIn'))).toBe(true)
    expect(traces.some((t) => t.includes('GET /session') && t.includes('active'))).toBe(true)
    await page.close()
  })
})
