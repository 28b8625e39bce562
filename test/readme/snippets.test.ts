/**
 * README code runs as pasted: every TypeScript block of README.md is a file of `examples/readme/`,
 * shown verbatim (so the two cannot drift), type-checked here against the sources, importing only
 * what the package exports, and run by its own test in `test/readme/` (see examples/readme/README.md).
 * The long sections live in the documentation (`docs/`), whose marked blocks are held to the same
 * files; test/docs/code-blocks.test.ts compiles its other blocks.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { SNIPPETS_DIR, snippetNames, TSC_INIT_OPTIONS } from './snippet.js'

const root = process.cwd()
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const docs = join(root, 'docs')
/** The documentation's hand-written pages (the generated reference, provider and flow pages quote no snippet). */
const docPages = ['getting-started', 'concepts', 'guides', 'migration'].flatMap((folder) =>
  readdirSync(join(docs, folder))
    .filter((name) => name.endsWith('.md'))
    .map((name) => readFileSync(join(docs, folder, name), 'utf8')),
)
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> }

const MARKER = /^<!-- snippet: (\S+) -->$/

/** The README's fenced blocks, with the marker line above each (if any). */
function fencedBlocks(markdown: string): { lang: string; body: string; marker: string | null; line: number }[] {
  const lines = markdown.split('\n')
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)(?: \[.+\])?$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.indexOf('```', i + 1)
    expect(end, `the block opened on README line ${i + 1} is closed`).toBeGreaterThan(i)
    blocks.push({
      lang: open[1]!,
      body: `${lines.slice(i + 1, end).join('\n')}\n`,
      marker: MARKER.exec(lines[i - 1] ?? '')?.[1] ?? null,
      line: i + 1,
    })
    i = end
  }
  return blocks
}

const blocks = fencedBlocks(readme)
/** README's blocks and the documentation's. */
const allBlocks = [...blocks, ...docPages.flatMap((page) => fencedBlocks(page))]
const snippets = snippetNames()

describe('README snippets', () => {
  it('has a marker above every TypeScript or JavaScript block', () => {
    const unmarked = blocks.filter((b) => ['ts', 'typescript', 'js', 'javascript'].includes(b.lang) && !b.marker)
    expect(unmarked.map((b) => `README line ${b.line}`)).toEqual([])
    expect(allBlocks.filter((b) => b.marker).length).toBeGreaterThanOrEqual(snippets.length)
  })

  it.each(snippets)('shows examples/readme/%s exactly as the file holds it (in README or the documentation)', (name) => {
    const marked = allBlocks.filter((b) => b.marker === `examples/readme/${name}`)
    expect(marked.length, `README or a page of docs/ has a block marked examples/readme/${name}`).toBeGreaterThan(0)
    const file = readFileSync(join(SNIPPETS_DIR, name), 'utf8')
    for (const block of marked) expect(block.body).toBe(file)
  })

  it('marks only files that exist', () => {
    for (const block of allBlocks.filter((b) => b.marker)) {
      expect(existsSync(join(root, block.marker!)), block.marker!).toBe(true)
    }
  })

  it.each(snippets)('runs examples/readme/%s in its own test', (name) => {
    expect(existsSync(join(root, 'test', 'readme', name.replace(/\.ts$/, '.test.ts')))).toBe(true)
  })

  it.each(snippets)('imports from examples/readme/%s only subpaths the package exports', (name) => {
    const source = readFileSync(join(SNIPPETS_DIR, name), 'utf8')
    const patterns = Object.keys(pkg.exports).map(
      (key) => new RegExp(`^${(pkg.name + key.slice(1)).replace(/[.*]/g, (c) => (c === '*' ? '[\\w-]+' : '\\.'))}$`),
    )
    for (const [, specifier] of source.matchAll(/from '([^']+)'/g)) {
      if (specifier === pkg.name || specifier!.startsWith(`${pkg.name}/`)) {
        expect(patterns.some((p) => p.test(specifier!)), specifier).toBe(true)
      }
    }
  })

  it('type-checks every snippet against the sources under the options of `tsc --init`', () => {
    // Not the repo's own relaxed tsconfig: an application made with `tsc --init` has
    // exactOptionalPropertyTypes, verbatimModuleSyntax and declarations on (test/package/fresh-app
    // checks these options against what `tsc --init` writes, and compiles the snippets from the
    // packed package with TypeScript 5.9 and 7).
    const { options } = ts.convertCompilerOptionsFromJson(
      { ...TSC_INIT_OPTIONS, noEmit: true, baseUrl: root, paths: sourcePaths() },
      root,
    )
    const files = [...snippets.map((name) => join(SNIPPETS_DIR, name)), ...TYPESCRIPT_APP_SNIPPETS.map((path) => join(root, path))]
    const program = ts.createProgram(files, options)
    const diagnostics = files.flatMap((file) => {
      const source = program.getSourceFile(file)!
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source), ...program.getDeclarationDiagnostics(source)]
    }).map((d) => {
      const where = d.file ? `${relative(root, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : ''
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
    expect(diagnostics).toEqual([])
  }, 120_000)
})

/** The README's TypeScript blocks that are files of an example app rather than of examples/readme/. */
const TYPESCRIPT_APP_SNIPPETS = ['examples/express/server.ts']

/** `authchart/...` mapped to the sources, as vitest's aliases do. */
function sourcePaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {}
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string' || !('default' in (target as object))) continue
    const built = (target as { default: string }).default
    const source = built.replace(/^\.\/dist\//, './').replace(/\.js$/, '.ts')
    paths[pkg.name + key.slice(1)] = [source]
  }
  return paths
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-')

/** The lines of README outside fenced blocks. */
const proseLines = (() => {
  let fenced = false
  return readme.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced
    return !fenced && !line.startsWith('```')
  })
})()

describe('README structure', () => {
  const headings = proseLines.filter((line) => /^#{2,3} /.test(line)).map((line) => line.replace(/^#+ /, ''))

  it('is the front page: what it is, the two commands, an example, and links into the documentation', () => {
    expect(readme).toContain('npm ci && npm run demo')
    expect(readme).toContain('npm test')
    expect(blocks.filter((b) => b.marker?.startsWith('examples/readme/')).length).toBeGreaterThan(0)
    expect(readme.split('\n').length).toBeLessThan(200)
    const pages = [...readme.matchAll(/\]\((docs\/[^)#]+)(?:#[^)]*)?\)/g)].map(([, path]) => path!)
    expect(pages.length).toBeGreaterThan(10)
    expect(pages.filter((path) => !existsSync(join(root, path)))).toEqual([])
  })

  it('links only to headings that exist', () => {
    const anchors = new Set(headings.map(anchorOf))
    const links = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map(([, anchor]) => anchor!)
    expect(links.filter((anchor) => !anchors.has(anchor))).toEqual([])
  })

  it('refers to no section of a document the reader does not have (spec §…), nor does the documentation', () => {
    expect(readme.match(/[^\n]*§[^\n]*/g) ?? []).toEqual([])
    expect(docPages.flatMap((page) => page.match(/[^\n]*§[^\n]*/g) ?? [])).toEqual([])
  })

  it('describes how it is built in one table, each folder once (docs/concepts/architecture.md)', () => {
    const section = readFileSync(join(docs, 'concepts', 'architecture.md'), 'utf8')
    const blocks = section.split(/\n\s*\n/).filter((block) => block.trimStart().startsWith('|'))
    expect(blocks).toHaveLength(1)
    const folders = blocks[0]!.split('\n').filter((line) => line.startsWith('| `')).map((line) => line.split('|')[1]!.trim())
    expect(folders.length).toBeGreaterThan(10)
    expect(new Set(folders).size).toBe(folders.length)
  })

  it('names in the Install section of the documentation every package a snippet imports besides authchart', () => {
    const page = readFileSync(join(docs, 'getting-started', 'index.md'), 'utf8')
    const install = page.slice(page.indexOf('## Install\n'), page.indexOf('\n## ', page.indexOf('## Install\n') + 1))
    const files = [...snippets.map((name) => join(SNIPPETS_DIR, name))]
    const missing = new Set<string>()
    for (const file of files) {
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/from '([^'.][^']*)'/g)) {
        const name = specifier!.startsWith('@') ? specifier!.split('/').slice(0, 2).join('/') : specifier!.split('/')[0]!
        if (name === pkg.name || specifier!.startsWith('node:')) continue
        if (!install.includes(`\`${name}\``)) missing.add(`${name} (${relative(root, file)})`)
      }
    }
    expect([...missing]).toEqual([])
  })
})
