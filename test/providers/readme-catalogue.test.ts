/**
 * The documentation's provider catalogue (docs/guides/provider-catalogue.md) is generated from the
 * provider files (`npm run catalogue`), never kept by hand: the committed table must be exactly
 * what the files produce today.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

type Factory = (options?: Record<string, unknown>) => Record<string, unknown>

interface CatalogueScript {
  BEGIN: string
  END: string
  presetFiles(folder: string, extension: string): string[]
  catalogueTable(presets: [string, Factory][]): string
  withCatalogue(readme: string, table: string): string
}

const script = '../../scripts/catalogue.mjs'
const { BEGIN, END, presetFiles, catalogueTable, withCatalogue } = (await import(/* @vite-ignore */ script)) as CatalogueScript
const folder = new URL('../../providers/', import.meta.url)
const readme = readFileSync(new URL('../../docs/guides/provider-catalogue.md', import.meta.url), 'utf8')

async function presets(): Promise<[string, Factory][]> {
  const files = presetFiles(folder.pathname, '.ts')
  return Promise.all(
    files.map(async (file) => {
      const module = (await import(/* @vite-ignore */ new URL(`${file}.ts`, folder).href)) as { default: Factory }
      return [file, module.default] as [string, Factory]
    }),
  )
}

describe("the documentation's provider catalogue", () => {
  it('is the table the provider files produce (run `npm run catalogue` after changing a preset)', async () => {
    const table = catalogueTable(await presets())
    expect(readme, 'the catalogue page has the catalogue markers').toContain(BEGIN)
    expect(withCatalogue(readme, table)).toBe(readme)
  })

  it('lists every preset file once, by its import path', async () => {
    const files = presetFiles(folder.pathname, '.ts')
    const section = readme.slice(readme.indexOf(BEGIN), readme.indexOf(END))
    for (const file of files) {
      expect(section.split(`\`authchart/providers/${file}\``).length - 1, file).toBe(1)
    }
    expect(files.length).toBeGreaterThanOrEqual(42)
  })

  it('changes when a preset changes (the comparison can fail)', async () => {
    const list = await presets()
    const altered = list.map(([file, factory]): [string, Factory] =>
      file === 'discord' ? [file, () => ({ ...factory(), checks: ['state'] })] : [file, factory],
    )
    expect(withCatalogue(readme, catalogueTable(altered))).not.toBe(readme)
  })
})
