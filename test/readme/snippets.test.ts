/**
 * README code runs as pasted: every TypeScript block of README.md is a file of `examples/readme/`,
 * shown verbatim (so the two cannot drift), type-checked here against the sources, importing only
 * what the package exports, and run by its own test in `test/readme/` (see examples/readme/README.md).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { SNIPPETS_DIR, snippetNames, TSC_INIT_OPTIONS } from './snippet.js'

const root = process.cwd()
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> }

const MARKER = /^<!-- snippet: (\S+) -->$/

/** The README's fenced blocks, with the marker line above each (if any). */
function fencedBlocks(markdown: string): { lang: string; body: string; marker: string | null; line: number }[] {
  const lines = markdown.split('\n')
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)$/.exec(lines[i]!)
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
const snippets = snippetNames()

describe('README snippets', () => {
  it('has a marker above every TypeScript or JavaScript block', () => {
    const unmarked = blocks.filter((b) => ['ts', 'typescript', 'js', 'javascript'].includes(b.lang) && !b.marker)
    expect(unmarked.map((b) => `README line ${b.line}`)).toEqual([])
    expect(blocks.filter((b) => b.marker).length).toBeGreaterThanOrEqual(snippets.length)
  })

  it.each(snippets)('shows examples/readme/%s exactly as the file holds it', (name) => {
    const marked = blocks.filter((b) => b.marker === `examples/readme/${name}`)
    expect(marked.length, `README has a block marked examples/readme/${name}`).toBeGreaterThan(0)
    const file = readFileSync(join(SNIPPETS_DIR, name), 'utf8')
    for (const block of marked) expect(block.body).toBe(file)
  })

  it('marks only files that exist', () => {
    for (const block of blocks.filter((b) => b.marker)) {
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
