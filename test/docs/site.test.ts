/**
 * The documentation site as a reader gets it: `npm run docs` builds it once, then the built HTML
 * is checked for links that lead nowhere, the API reference for exports without a description,
 * and the site, served on loopback and opened in Chromium, for its search, its charts and axe's
 * serious and critical violations.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { extname, join, relative, resolve } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../fixtures/chromium.js'

const root = process.cwd()
const dist = join(root, 'docs', '.vitepress', 'dist')
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((path) => statSync(join(dir, path)).isFile())
}

/** The built file a site path names (`/guides/` → `guides/index.html`), or null. */
function builtFile(path: string): string | null {
  const decoded = decodeURIComponent(path)
  const candidates = decoded.endsWith('/') ? [`${decoded}index.html`] : [decoded, `${decoded}.html`, `${decoded}/index.html`]
  for (const candidate of candidates) {
    const file = join(dist, candidate)
    if (file.startsWith(dist) && existsSync(file) && statSync(file).isFile()) return file
  }
  return null
}

let server: Server
let origin: string
let browser: Browser

beforeAll(async () => {
  const build = spawnSync('npm', ['run', 'docs'], { cwd: root, encoding: 'utf8', timeout: 280_000 })
  expect(build.status, `npm run docs failed:\n${build.stdout}\n${build.stderr}`).toBe(0)
  server = createServer((request, response) => {
    const file = builtFile(new URL(request.url ?? '/', 'http://localhost').pathname)
    if (!file) return void response.writeHead(404).end('not found')
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file))
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await launchChromium()
}, 300_000)

afterAll(async () => {
  await browser?.close()
  if (server) await new Promise((done) => server.close(done))
})

describe('the built site', () => {
  it('has no internal link or source that leads nowhere', () => {
    const pages = filesUnder(dist).filter((path) => path.endsWith('.html'))
    expect(pages.length).toBeGreaterThan(150)
    const ids = new Map<string, Set<string>>()
    const idsOf = (file: string) => {
      if (!ids.has(file)) ids.set(file, new Set([...readFileSync(file, 'utf8').matchAll(/\sid="([^"]+)"/g)].map(([, id]) => id!)))
      return ids.get(file)!
    }
    const broken: string[] = []
    for (const page of pages) {
      const html = readFileSync(join(dist, page), 'utf8')
      for (const [, attribute, raw] of html.matchAll(/\s(href|src)="([^"]*)"/g)) {
        const link = raw!.replace(/&amp;/g, '&')
        if (/^(?:[a-z]+:|\/\/)/i.test(link)) continue
        const [pathPart, hash] = link.split('#') as [string, string | undefined]
        const path = pathPart.split('?')[0]!
        const target = path === '' ? join(dist, page) : builtFile(path.startsWith('/') ? path : `/${relative(dist, resolve(dist, page, '..', path))}`)
        if (!target) broken.push(`${page}: ${attribute}="${link}"`)
        else if (hash && target.endsWith('.html') && !idsOf(target).has(decodeURIComponent(hash))) broken.push(`${page}: ${attribute}="${link}" (no such anchor)`)
      }
    }
    expect(broken).toEqual([])
  })

  it('has a reference entry with a description for every export of every public entry point', () => {
    type Reflection = {
      id: number
      name: string
      kind: number
      comment?: { summary?: { text: string }[] }
      signatures?: Reflection[]
      getSignature?: Reflection
      children?: Reflection[]
      target?: number
    }
    const project = JSON.parse(readFileSync(join(root, 'docs', '.vitepress', 'api.json'), 'utf8')) as Reflection
    const byId = new Map<number, Reflection>()
    const index = (reflection: Reflection) => {
      byId.set(reflection.id, reflection)
      for (const child of reflection.children ?? []) index(child)
    }
    index(project)
    const described = (reflection: Reflection | undefined, seen = 0): boolean => {
      if (!reflection || seen > 5) return false
      const text = (comment: Reflection['comment']) => (comment?.summary ?? []).map((part) => part.text).join('').trim()
      if (text(reflection.comment)) return true
      if ((reflection.signatures ?? []).some((signature) => text(signature.comment))) return true
      if (reflection.getSignature && text(reflection.getSignature.comment)) return true
      return reflection.target !== undefined && described(byId.get(reflection.target), seen + 1)
    }
    const modules = project.children ?? []
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
    expect(modules.length).toBeGreaterThanOrEqual(Object.keys(pkg.exports).length)
    const missing: string[] = []
    let exports = 0
    // The reference's index lists each module with its page (`authchart/jwt` may be `authchart/jwt-1.md`).
    const pageOf = new Map(
      [...readFileSync(join(root, 'docs', 'reference', 'index.md'), 'utf8').matchAll(/^- \[([^\]]+)\]\(([^)]+)\.md\)$/gm)].map(([, name, path]) => [name!, path!]),
    )
    for (const module of modules) {
      const page = builtFile(`/reference/${pageOf.get(module.name) ?? module.name}.html`)
      expect(page, `the reference has a page for ${module.name}`).not.toBeNull()
      const html = readFileSync(page!, 'utf8')
      for (const symbol of module.children ?? []) {
        exports++
        if (!html.includes(symbol.name)) missing.push(`${module.name}: ${symbol.name} (not on its page)`)
        else if (!described(symbol)) missing.push(`${module.name}: ${symbol.name}`)
      }
    }
    expect(exports).toBeGreaterThan(300)
    expect(missing).toEqual([])
  })
})

describe('the benchmark page', () => {
  type Ratio = { speedUp: number; cpu: number }
  type Scenario = { name: string; vsAuthjs?: Ratio; vsBetterAuth?: Ratio }
  const published = JSON.parse(readFileSync(join(root, 'bench', 'results', 'published.json'), 'utf8')) as { environment: string; scenarios: Scenario[] }

  it('lists every scenario of the committed results, with its ratios against each peer', () => {
    const html = readFileSync(join(dist, 'benchmarks.html'), 'utf8')
    const rows = new Map([...html.matchAll(/<tr><td><code>([^<]+)<\/code><\/td>([\s\S]*?)<\/tr>/g)].map(([, name, rest]) => [name!, rest!]))
    expect(published.scenarios.length).toBeGreaterThan(5)
    expect([...rows.keys()].sort()).toEqual(published.scenarios.map((s) => s.name).sort())
    for (const scenario of published.scenarios) {
      for (const ratio of [scenario.vsAuthjs, scenario.vsBetterAuth]) {
        if (ratio) expect(rows.get(scenario.name), scenario.name).toContain(`${ratio.speedUp.toFixed(1)}×`)
      }
    }
  })

  it('names the machine, its load while the bench ran, and the command that reproduces it', () => {
    const text = readFileSync(join(dist, 'benchmarks.html'), 'utf8').replace(/<[^>]+>/g, '')
    const load = /load average ([\d. ]+) before/.exec(published.environment)![1]!.trim()
    expect(text.includes(`its load average was ${load} before`), 'the load average is on the page').toBe(true)
    expect(text.includes('node bench/run.js --quick --json &gt; bench/results/published.json'), 'the command is on the page').toBe(true)
  })
})

describe('the site in Chromium', () => {
  const withPage = async (path: string, check: (page: Page) => Promise<void>) => {
    const page = await browser.newPage()
    try {
      await page.goto(`${origin}${path}`, { waitUntil: 'load' })
      await check(page)
    } finally {
      await page.close()
    }
  }

  it.each(['refresh token', 'passkey', 'Next.js middleware'])('finds "%s" with the local search', async (query) => {
    await withPage('/', async (page) => {
      await page.locator('.VPNavBarSearch button').first().click()
      await page.locator('#localsearch-input').fill(query)
      const results = page.locator('.results .result')
      await results.first().waitFor({ timeout: 10_000 })
      expect(await results.count()).toBeGreaterThan(0)
      const words = query.toLowerCase().split(' ')
      const text = (await results.first().innerText()).toLowerCase()
      expect(words.some((word) => text.includes(word.replace(/\.js$/, '')))).toBe(true)
    })
  })

  const flows = readdirSync(join(root, 'visualizations', 'out')).filter((name) => name.endsWith('.svg')).map((name) => name.slice(0, -4))

  it.each(flows)('shows the chart of %s on its flow page', async (flow) => {
    await withPage(`/flows/${flow}.html`, async (page) => {
      const chart = page.locator(`img[src$="/charts/${flow}.svg"]`)
      await expect.poll(() => chart.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth)).toBeGreaterThan(0)
    })
  })

  it.each(['/', '/guides/oauth.html', '/flows/oauth-signin.html', '/reference/authchart.html'])(
    'has no serious or critical axe violation on %s',
    async (path) => {
      await withPage(path, async (page) => {
        await page.addScriptTag({ content: AXE })
        type Violation = { id: string; impact: string | null; nodes: { target: string[] }[] }
        const violations = (await page.evaluate(async () => {
          const axe = (window as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe
          return (await axe.run()).violations
        })) as Violation[]
        const serious = violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')}`)
        expect(serious).toEqual([])
      })
    },
  )
})
