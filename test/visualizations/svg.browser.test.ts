/**
 * The SVG diagrams as a browser draws them: headless Chromium lays out each committed SVG (and one
 * with taken transitions, as the inspector draws it), and every text box is measured with getBBox:
 * state text stays inside its state's box, edge labels inside the image. The width table the
 * labels are sized from is measured again from the font itself.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OUT_DIR } from '../../visualizations/files.js'
import { builtInMachines } from '../../visualizations/flows.js'
import { flowGraph } from '../../visualizations/graph.js'
import { flowSvg } from '../../visualizations/render.js'
import { BOLD_WIDTHS, MEASURED_CHARACTERS, REGULAR_WIDTHS } from '../../visualizations/text-width.js'
import { launchChromium } from '../fixtures/chromium.js'

let browser: Browser
let page: Page

beforeAll(async () => {
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } })
})
afterAll(() => browser?.close())

/** Boxes (in the SVG's own units) of every text that sticks out of where it belongs. */
async function overflowingText(svg: string): Promise<string[]> {
  await page.setContent(`<!doctype html><html><body style="margin:0">${svg.slice(svg.indexOf('<svg'))}</body></html>`)
  return page.evaluate(() => {
    const root = document.querySelector('svg')!
    const inside = (inner: DOMRect, outer: DOMRect, slack = 0.5) =>
      inner.left >= outer.left - slack && inner.right <= outer.right + slack &&
      inner.top >= outer.top - slack && inner.bottom <= outer.bottom + slack
    const problems: string[] = []
    for (const node of root.querySelectorAll<SVGGElement>('g.node[id^="state:"]')) {
      const shape = node.querySelector('path, polygon')!.getBoundingClientRect()
      for (const text of node.querySelectorAll('text')) {
        if (!inside(text.getBoundingClientRect(), shape)) problems.push(`${node.id}: "${text.textContent}"`)
      }
    }
    const canvas = root.getBoundingClientRect()
    for (const edge of root.querySelectorAll<SVGGElement>('g.edge')) {
      for (const text of edge.querySelectorAll('text')) {
        if (!inside(text.getBoundingClientRect(), canvas, 0)) problems.push(`${edge.id}: "${text.textContent}" leaves the image`)
      }
    }
    return problems
  })
}

describe('SVG diagrams in Chromium', () => {
  it('size labels from the widths DejaVu Sans really has (.ci/run installs fonts-dejavu-core; `sudo apt-get install -y fonts-dejavu-core`)', async () => {
    const measured = await page.evaluate((chars) => {
      const context = document.createElement('canvas').getContext('2d')!
      const widths = (weight: string) => {
        context.font = `${weight} 1000px "DejaVu Sans"`
        return [...chars].map((c) => Math.round(context.measureText(c).width))
      }
      return { regular: widths('normal'), bold: widths('bold'), installed: document.fonts.check('12px "DejaVu Sans"') }
    }, MEASURED_CHARACTERS)
    expect(measured.installed).toBe(true)
    expect(measured.regular).toEqual(REGULAR_WIDTHS)
    expect(measured.bold).toEqual(BOLD_WIDTHS)
  })

  it.each(builtInMachines.map((m) => [m.id]))('keeps every text of the committed %s.svg inside its box', async (id) => {
    const svg = readFileSync(join(OUT_DIR, `${id}.svg`), 'utf8')
    expect(await page.evaluate(() => document.fonts.ready.then(() => true))).toBe(true)
    expect(await overflowingText(svg)).toEqual([])
  })

  it.each(builtInMachines.map((m) => [m.id, m] as const))(
    'keeps the labels of taken transitions (with counts) inside the image of %s, as the inspector draws it',
    async (_id, machine) => {
      const graph = flowGraph(machine)
      const taken = new Map(graph.transitions.map((t, i) => [t.id, 1000 + i]))
      expect(await overflowingText(await flowSvg(graph, { taken }))).toEqual([])
    },
  )
})
