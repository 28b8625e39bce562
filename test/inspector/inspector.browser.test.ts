/**
 * The inspector in a real browser: a Fastify app on loopback serves it after real sign-ins
 * (credentials, and OIDC against the real provider); headless Chromium opens it, takes a
 * screenshot, and every state of each configured machine is drawn in its SVG.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { credentialsSignInMachine, oauthSignInMachine, sessionMachine } from '../../machines/index.js'
import { stateElementId } from '../../visualizations/dot.js'
import { flowGraph } from '../../visualizations/graph.js'
import { startBrowserApp, type BrowserApp } from '../fixtures/browser-app.js'
import { credentialsProvider, SECRET, spyLogger } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient } from '../oauth/helpers.js'
import { flowInspector } from '../../core/inspector.js'
import { keepScreenshot } from '../fixtures/screenshot.js'

let server: BrowserApp
let origin: string
let op: RunningOidcProvider
let browser: Browser
const shots = mkdtempSync(join(tmpdir(), 'authchart-inspector-'))

beforeAll(async () => {
  op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op')] })
  server = await startBrowserApp({
    secret: SECRET,
    trustHost: true,
    inspector: flowInspector(),
    logger: spyLogger(),
    providers: [credentialsProvider(), appProvider(op.issuer, 'client_secret_basic', 'op')],
  } as never)
  ;({ origin, browser } = server)
})

afterAll(async () => {
  await server?.close()
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
    await keepScreenshot(page, { path: screenshot, fullPage: true })
    expect(statSync(screenshot).size).toBeGreaterThan(50_000)

    for (const machine of [sessionMachine, credentialsSignInMachine, oauthSignInMachine]) {
      await page.selectOption('[data-chart-choice]', machine.id)
      // A phase (compound state) is drawn as a box around its children: a Graphviz cluster.
      const drawn = await page.$$eval(`section[data-flow="${machine.id}"] svg g.node, section[data-flow="${machine.id}"] svg g.cluster`, (nodes) =>
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

  it('sets every state title of the session chart, grouped in phases, at 11 px or more at the fit width of a 1,400 px page', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    await page.goto(`${origin}/auth/__flows#flow-session`)
    const chart = page.locator('section[data-flow="session"] [data-chart]')
    await chart.evaluate((element) => element.scrollIntoView())
    const titles = await chart.evaluate((element) => {
      const svg = element.querySelector('svg')!
      // Fitted: the SVG spans the chart's width, its viewBox the whole drawing.
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width
      return [...svg.querySelectorAll<SVGGElement>('g[id^="state:session:"]')].map((state) => {
        // A state's first text is its title (a phase's too).
        const title = state.querySelector('text')!
        return {
          state: state.id,
          text: title.textContent,
          px: Number(title.getAttribute('font-size')) * scale,
          box: title.getBoundingClientRect().height,
          fitted: Math.abs(svg.getBoundingClientRect().width - element.clientWidth) <= 2,
        }
      })
    })
    expect(titles.map((t) => t.state).sort()).toEqual(flowGraph(sessionMachine).states.map((s) => stateElementId('session', s.id)).sort())
    for (const title of titles) {
      expect(title.fitted, 'the chart is fitted to the page').toBe(true)
      expect(title.px, `${title.state} "${title.text}" is set at ${title.px.toFixed(1)} px`).toBeGreaterThanOrEqual(11)
      // The rendered glyphs: a line box at least as tall as 11 px type.
      expect(title.box, `${title.state} "${title.text}" is drawn ${title.box.toFixed(1)} px tall`).toBeGreaterThanOrEqual(11)
    }
    console.log(`session chart at 1,400 px: smallest state title ${Math.min(...titles.map((t) => t.px)).toFixed(1)} px`)
    await page.close()
  })

  it('starts each chart fitted to the page width, and pans and zooms it with its own script', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    const errors: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    page.on('pageerror', (error) => errors.push(error.message))
    const requests: string[] = []
    page.on('request', (request) => requests.push(request.url()))
    await page.goto(`${origin}/auth/__flows`)
    expect(requests.every((url) => url.startsWith(origin)), 'nothing is loaded from elsewhere').toBe(true)
    await page.selectOption('[data-chart-choice]', 'oauth-signin')

    const chart = page.locator('section[data-flow="oauth-signin"] [data-chart]')
    const svg = chart.locator('svg')
    await chart.evaluate((element) => element.scrollIntoView())
    const viewBox = async () => (await svg.getAttribute('viewBox'))!.split(' ').map(Number) as [number, number, number, number]
    const full = await viewBox()

    // Fit to width: the chart spans the section, with its own aspect ratio.
    const frame = (await chart.boundingBox())!
    const drawn = (await svg.boundingBox())!
    expect(Math.abs(drawn.width - (frame.width - 2))).toBeLessThanOrEqual(1)
    expect(drawn.height / drawn.width).toBeCloseTo(full[3] / full[2], 2)

    const label = chart.locator('g[id="state:oauth-signin:awaitingCallback"] path').first()
    const small = (await label.boundingBox())!

    // Zoom in with the button: a third of the view gone, the state's box half as large again.
    await chart.locator('[data-zoom="in"]').click()
    const zoomed = await viewBox()
    expect(zoomed[2]).toBeCloseTo(full[2] / 1.5, 0)
    expect(zoomed[3]).toBeCloseTo(full[3] / 1.5, 0)
    const larger = (await label.boundingBox())!
    expect(larger.width).toBeCloseTo(small.width * 1.5, 0)
    expect(larger.height).toBeCloseTo(small.height * 1.5, 0)

    // Pan: dragging by 150 px moves the drawing by 150 px.
    const start = { x: drawn.x + drawn.width / 2, y: drawn.y + 150 }
    await page.mouse.move(start.x, start.y)
    await page.mouse.down()
    await page.mouse.move(start.x - 150, start.y - 40, { steps: 5 })
    await page.mouse.up()
    const moved = (await label.boundingBox())!
    expect(moved.x - larger.x).toBeCloseTo(-150, 0)
    expect(moved.y - larger.y).toBeCloseTo(-40, 0)

    // Ctrl + wheel (and pinch) zooms around the pointer.
    const beforeWheel = (await viewBox())[2]
    await page.keyboard.down('Control')
    await page.mouse.wheel(0, -200)
    await page.keyboard.up('Control')
    await expect.poll(async () => (await viewBox())[2]).toBeLessThan(beforeWheel)

    // "fit width" and the 0 key return to the whole chart.
    await chart.locator('[data-zoom="fit"]').click()
    expect(await viewBox()).toEqual(full)
    await chart.locator('[data-zoom="in"]').click()
    await chart.focus()
    await page.keyboard.press('0')
    expect(await viewBox()).toEqual(full)
    expect(errors).toEqual([])
    await page.close()
  })

  it('shows one chart at a time, chosen from the list and kept in the URL, and filters the traces by flow and outcome', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()))
    // Traces of two flows with two outcomes: a wrong password, a right one, and session reads.
    await page.goto(`${origin}/auth/signin`)
    await page.fill('input[name="username"]', 'alice')
    await page.fill('input[name="password"]', 'wrong')
    await page.click('form[action$="/callback/credentials"] button')
    await page.waitForLoadState()
    await page.goto(`${origin}/auth/signin`)
    await page.fill('input[name="username"]', 'alice')
    await page.fill('input[name="password"]', 'wonderland')
    await Promise.all([page.waitForURL(`${origin}/`), page.click('form[action$="/callback/credentials"] button')])
    await page.goto(`${origin}/auth/session`)
    // The page is rendered at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100))

    // The inspector's own page runs without an error (the wrong password's 401 above is not its).
    errors.length = 0
    await page.goto(`${origin}/auth/__flows`)
    const visibleCharts = () => page.$$eval('section.flow', (sections) => sections.filter((s) => !(s as HTMLElement).hidden).map((s) => (s as HTMLElement).dataset.flow))
    const first = await page.$eval('[data-chart-choice]', (select) => (select as HTMLSelectElement).value)
    expect(await visibleCharts()).toEqual([first])
    await page.selectOption('[data-chart-choice]', 'credentials-signin')
    expect(await visibleCharts()).toEqual(['credentials-signin'])
    expect(page.url()).toBe(`${origin}/auth/__flows#flow-credentials-signin`)
    // One chart's height, not the sum of every chart's (10,000 px before).
    const height = await page.evaluate(() => document.documentElement.scrollHeight)
    const chartHeight = await page.locator('section[data-flow="credentials-signin"]').evaluate((s) => s.getBoundingClientRect().height)
    expect(height).toBeLessThan(chartHeight + 2_500)
    await page.reload()
    expect(await visibleCharts()).toEqual(['credentials-signin'])
    // In a chart drawn flat (not in phases), no transition's label is set over a state's text.
    const overlaps = await page.locator('section[data-flow="credentials-signin"] [data-chart]').evaluate((element) => {
      const box = (node: Element) => node.getBoundingClientRect()
      const cross = (a: DOMRect, b: DOMRect) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1
      const stateTexts = [...element.querySelectorAll('g.node text, g.cluster text')].map((text) => ({ text: text.textContent, box: box(text) }))
      const edgeTexts = [...element.querySelectorAll('g.edge text')].map((text) => ({ text: text.textContent, box: box(text) }))
      return edgeTexts.flatMap((edge) => stateTexts.filter((state) => cross(edge.box, state.box)).map((state) => `"${edge.text}" over "${state.text}"`))
    })
    expect(overlaps).toEqual([])

    const shownTraces = () => page.$$eval('tr.trace', (rows) => rows.filter((r) => !(r as HTMLElement).hidden).map((r) => [(r as HTMLElement).dataset.flow, (r as HTMLElement).dataset.outcome]))
    const all = await shownTraces()
    expect([...new Set(all.map(([flow]) => flow))]).toEqual(expect.arrayContaining(['credentials-signin', 'session']))
    await page.selectOption('[data-trace-filter="flow"]', 'credentials-signin')
    const signIns = await shownTraces()
    expect(signIns.length).toBeGreaterThanOrEqual(2)
    expect(signIns.every(([flow]) => flow === 'credentials-signin')).toBe(true)
    const outcomes = [...new Set(signIns.map(([, outcome]) => outcome))]
    expect(outcomes.length).toBeGreaterThanOrEqual(2)
    await page.selectOption('[data-trace-filter="outcome"]', outcomes[0]!)
    const filtered = await shownTraces()
    expect(filtered.length).toBeGreaterThan(0)
    expect(filtered.every(([flow, outcome]) => flow === 'credentials-signin' && outcome === outcomes[0])).toBe(true)
    expect(await page.textContent('[data-trace-count]')).toBe(`${filtered.length} of ${all.length} shown`)
    await keepScreenshot(page, { path: join(shots, 'inspector-one-chart.png') })
    expect(errors).toEqual([])
    await page.close()
  })
})
