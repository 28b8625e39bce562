/**
 * The code of the documentation compiles as a reader pastes it, by README's mechanism extended to
 * `docs/**\/*.md`: a block marked `<!-- snippet: <file> -->` shows that file verbatim (the file is
 * type-checked and run by its own tests: `examples/readme/` under the options of `tsc --init`,
 * the example apps by their builds); every other TypeScript block is compiled here against the
 * package's sources, the blocks of one page as the files of one app (a block titled
 * ```` ```ts [app/page.ts] ```` is that file), under the options of `tsc --init`, or those of
 * create-next-app on a page whose front matter says `snippets: next`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { TSC_INIT_OPTIONS } from '../readme/snippet.js'

const root = process.cwd()
const docs = join(root, 'docs')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> }

/** The options create-next-app writes into a new app's tsconfig.json. */
const CREATE_NEXT_APP_OPTIONS = {
  target: 'ES2017',
  lib: ['dom', 'dom.iterable', 'esnext'],
  allowJs: true,
  skipLibCheck: true,
  strict: true,
  noEmit: true,
  esModuleInterop: true,
  module: 'esnext',
  moduleResolution: 'bundler',
  resolveJsonModule: true,
  isolatedModules: true,
  jsx: 'react-jsx',
} as const

/** The folders of pages written by hand; the generated ones (reference, providers, flow pages) hold no examples of ours. */
const HAND_WRITTEN = ['', 'getting-started', 'concepts', 'guides', 'migration', 'adapters']

/** Pages the docs build writes among the hand-written ones (from the committed bench results). */
const GENERATED_PAGES = ['benchmarks.md']

/**
 * The hand-written pages. Only their folders are listed: the docs test rewrites the generated
 * folders while the suite runs.
 */
function handWrittenPages(): string[] {
  return [
    ...HAND_WRITTEN.flatMap((folder) =>
      readdirSync(join(docs, folder))
        .map((name) => (folder ? `${folder}/${name}` : name))
        .filter((page) => page.endsWith('.md') && !GENERATED_PAGES.includes(page)),
    ),
    'flows/index.md',
  ].sort()
}

interface Block {
  lang: string
  title: string | null
  body: string
  marker: string | null
  line: number
}

const MARKER = /^<!-- snippet: (\S+) -->$/

function fencedBlocks(markdown: string, page: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)(?: \[(.+)\])?$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.indexOf('```', i + 1)
    expect(end, `the block opened on ${page}:${i + 1} is closed`).toBeGreaterThan(i)
    blocks.push({
      lang: open[1]!,
      title: open[2] ?? null,
      body: `${lines.slice(i + 1, end).join('\n')}\n`,
      marker: MARKER.exec(lines[i - 1] ?? '')?.[1] ?? null,
      line: i + 1,
    })
    i = end
  }
  return blocks
}

/** `authchart/...` mapped to the sources, as vitest's aliases do. */
function sourcePaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {}
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string' || !('default' in (target as object))) continue
    const built = (target as { default: string }).default
    paths[pkg.name + key.slice(1)] = [join(root, built.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'))]
  }
  return paths
}

const pages = handWrittenPages().map((page) => {
  const markdown = readFileSync(join(docs, page), 'utf8')
  return { page, next: /^---\n[\s\S]*?^snippets: next$[\s\S]*?^---$/m.test(markdown), blocks: fencedBlocks(markdown, page) }
})
const TYPESCRIPT = ['ts', 'typescript', 'tsx']

/** Compiles `files` (path → text; virtual) with the package mapped to its sources. */
function compile(files: Map<string, string>, base: object, extraRoots: string[] = []): string[] {
  const { options, errors } = ts.convertCompilerOptionsFromJson({ ...base, noEmit: true, paths: sourcePaths() }, root)
  expect(errors).toEqual([])
  const host = ts.createCompilerHost(options)
  const { fileExists, readFile, getSourceFile } = host
  const folders = new Set([...files.keys()].flatMap((file) => file.split('/').slice(1, -1).map((_, i, parts) => `/${parts.slice(0, i + 1).join('/')}`)))
  const { directoryExists } = host
  host.directoryExists = (folder) => folders.has(folder) || (directoryExists?.call(host, folder) ?? ts.sys.directoryExists(folder))
  host.fileExists = (file) => files.has(file) || fileExists.call(host, file)
  host.readFile = (file) => files.get(file) ?? readFile.call(host, file)
  host.getSourceFile = (file, language, ...rest) =>
    files.has(file) ? ts.createSourceFile(file, files.get(file)!, language, true) : getSourceFile.call(host, file, language, ...rest)
  const rootNames = [...files.keys(), ...extraRoots]
  const program = ts.createProgram({ rootNames, options, host })
  return rootNames.flatMap((file) => {
    const source = program.getSourceFile(file)!
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
      const where = d.file ? `${relative(root, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : ''
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
  })
}

describe('code blocks of the documentation', () => {
  it('finds the pages and their TypeScript', () => {
    expect(pages.length).toBeGreaterThan(30)
    expect(pages.flatMap((p) => p.blocks).filter((b) => TYPESCRIPT.includes(b.lang)).length).toBeGreaterThan(30)
  })

  it.each(pages.filter((p) => p.blocks.some((b) => b.marker)).map((p) => p.page))('%s shows each marked file exactly as it holds it', (page) => {
    for (const block of pages.find((p) => p.page === page)!.blocks.filter((b) => b.marker)) {
      const file = join(root, block.marker!)
      expect(existsSync(file), `${page}:${block.line} marks ${block.marker}, which exists`).toBe(true)
      expect(block.body, `${page}:${block.line} shows ${block.marker}`).toBe(readFileSync(file, 'utf8'))
    }
  })

  it('marks only files a test type-checks: README snippets, or files of an example app with its own build', () => {
    const marked = pages.flatMap((p) => p.blocks.filter((b) => b.marker && TYPESCRIPT.includes(b.lang)).map((b) => b.marker!))
    const unchecked = marked.filter(
      (path) => !path.startsWith('examples/readme/') && !(path.startsWith('examples/') && existsSync(join(root, path.split('/').slice(0, 2).join('/'), 'package.json'))),
    )
    expect(unchecked).toEqual([])
  })

  it.each([false, true])('compiles every unmarked TypeScript block against the package (create-next-app pages: %s)', (next) => {
    // The blocks of one page are the files of one app, in a folder of its own.
    const files = new Map<string, string>()
    for (const { page, blocks } of pages.filter((p) => p.next === next)) {
      const app = join(docs, '.blocks', page.replace(/\.md$/, ''))
      blocks
        .filter((b) => !b.marker && TYPESCRIPT.includes(b.lang))
        .forEach((block, n) => {
          const name = join(app, block.title ?? `block-${n + 1}.${block.lang === 'tsx' ? 'tsx' : 'ts'}`)
          expect(files.has(name), `${page}:${block.line}: two blocks titled ${block.title}`).toBe(false)
          files.set(name, block.body)
        })
    }
    expect(files.size).toBeGreaterThanOrEqual(4)
    // The README snippets a page shows are files, type-checked with them under `tsc --init`'s options.
    const snippets = next
      ? []
      : [...new Set(pages.flatMap((p) => p.blocks.map((b) => b.marker ?? '').filter((m) => m.startsWith('examples/readme/') && m.endsWith('.ts'))))]
    expect(compile(files, next ? CREATE_NEXT_APP_OPTIONS : TSC_INIT_OPTIONS, snippets.map((path) => join(root, path)))).toEqual([])
  }, 150_000)
})


