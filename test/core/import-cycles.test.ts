/**
 * No import circle in `core/`, the modules loaded on demand included. `test/core/imports.test.ts`
 * reads only `import … from` and `export … from`; this graph also follows a literal `import('…')`:
 * a flow module loaded on demand that imports back into the module that loads it ties the two
 * together (a bundler puts them in one chunk, and which one runs first depends on who asked), so
 * the on-demand boundary of `core/flows/kinds.ts` only holds when no circle crosses it. Type-only
 * imports (`import type`, every name `type`, `typeof import('…')`) load nothing and do not count.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { importCircles, type ImportGraph } from '../fixtures/import-graph.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** How a file reaches another: a static import (or re-export), or a literal `import()`. */
type EdgeKind = 'static' | 'dynamic'

interface LoadEdge {
  readonly to: string
  readonly kind: EdgeKind
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier)
  return [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')].find((candidate) => {
    try {
      return statSync(candidate).isFile()
    } catch {
      return false
    }
  })
}

function loadsNothing(statement: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(statement)) {
    if (statement.isTypeOnly) return true
    const clause = statement.exportClause
    return !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly)
  }
  const clause = statement.importClause
  if (!clause) return false
  if (clause.isTypeOnly) return true
  if (clause.name) return false
  const bindings = clause.namedBindings
  return !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly)
}

/** The loading edges of one source text (relative specifiers only), resolved from `file`. */
function loadEdgesOf(file: string, text: string, resolveFrom: (specifier: string) => string | undefined): LoadEdge[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const edges: LoadEdge[] = []
  const add = (specifier: string, kind: EdgeKind) => {
    if (!specifier.startsWith('.')) return
    const to = resolveFrom(specifier)
    if (to !== undefined) edges.push({ to, kind })
  }
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier) && !loadsNothing(node)) add(node.moduleSpecifier.text, 'static')
      return
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments
      if (specifier && ts.isStringLiteralLike(specifier)) add(specifier.text, 'dynamic')
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return edges
}

/** File (relative to the root) → the files of `folder` it loads, statically or on demand. */
function loadGraph(root: string, folder: string): Map<string, LoadEdge[]> {
  const graph = new Map<string, LoadEdge[]>()
  for (const file of sourceFiles(join(root, folder))) {
    const edges = loadEdgesOf(file, readFileSync(file, 'utf8'), (specifier) => {
      const target = resolveSpecifier(file, specifier)
      return target === undefined ? undefined : relative(root, target)
    })
    graph.set(
      relative(root, file),
      edges.filter(({ to }) => to.startsWith(`${folder}/`)),
    )
  }
  return graph
}

const asImportGraph = (graph: ReadonlyMap<string, readonly LoadEdge[]>): ImportGraph =>
  new Map([...graph].map(([file, edges]) => [file, edges.map(({ to }) => ({ to, typeOnly: false }))]))

/** Each circle as `a → b (on demand) → … → a`, naming the on-demand steps. */
function describeCircles(graph: ReadonlyMap<string, readonly LoadEdge[]>): string[] {
  return importCircles(asImportGraph(graph)).map((circle) =>
    circle
      .map((file, at) => {
        if (at === 0) return file
        const dynamic = graph.get(circle[at - 1]!)!.some(({ to, kind }) => to === file && kind === 'dynamic')
        return dynamic ? `${file} (import())` : file
      })
      .join(' → '),
  )
}

describe('the import graph of core/ with the modules loaded on demand', () => {
  const graph = loadGraph(ROOT, 'core')

  it('reads the tree, its on-demand loaders among its edges', () => {
    expect(graph.size).toBeGreaterThan(80)
    expect(graph.get('core/flows/kinds.ts')).toEqual(
      expect.arrayContaining([
        { to: 'core/flows/oauth/flow.ts', kind: 'dynamic' },
        { to: 'core/flows/email/flow.ts', kind: 'dynamic' },
      ]),
    )
    // The passkey flow comes with its preset (authchart/providers/passkey), the extended completion
    // with defineExtension: both loaded on demand, neither by the core's own loader table.
    expect(graph.get('core/define-extension.ts')).toContainEqual({ to: 'core/flows/signin-completion/extended.ts', kind: 'dynamic' })
    expect(graph.get('core/email/provider.ts')).toContainEqual({ to: 'core/flows/email/flow.ts', kind: 'dynamic' })
  })

  it('has no circle', () => {
    expect(describeCircles(graph)).toEqual([])
  })
})

describe('the loading edges of a module', () => {
  const edgesOf = (text: string) => loadEdgesOf('/src/a.ts', text, (specifier) => specifier.replace(/^\.\//, ''))

  it('follows static imports, re-exports and literal import() calls', () => {
    const text = [
      "import { a } from './static.js'",
      "import './side-effect.js'",
      "export { b } from './reexport.js'",
      "export * from './star.js'",
      "const load = () => import('./lazy.js')",
      "import * as pkg from 'package'",
    ].join('\n')
    expect(edgesOf(text)).toEqual([
      { to: 'static.js', kind: 'static' },
      { to: 'side-effect.js', kind: 'static' },
      { to: 'reexport.js', kind: 'static' },
      { to: 'star.js', kind: 'static' },
      { to: 'lazy.js', kind: 'dynamic' },
    ])
  })

  it('leaves out what loads nothing: type imports and type-level import()', () => {
    const text = [
      "import type { A } from './type.js'",
      "import { type B, type C } from './named-types.js'",
      "export type { D } from './type-reexport.js'",
      "type M = typeof import('./type-query.js')",
      'const computed = (name: string) => import(name)',
    ].join('\n')
    expect(edgesOf(text)).toEqual([])
  })

  it('keeps an import that brings one value among its types', () => {
    expect(edgesOf("import { type A, b } from './mixed.js'")).toEqual([{ to: 'mixed.js', kind: 'static' }])
  })
})

describe('the circle report', () => {
  it('names a circle through an on-demand import, and marks that step', () => {
    const graph = new Map<string, LoadEdge[]>([
      ['provider', [{ to: 'kinds', kind: 'static' }]],
      ['kinds', [{ to: 'flow', kind: 'dynamic' }]],
      ['flow', [{ to: 'provider', kind: 'static' }]],
      ['leaf', []],
    ])
    expect(describeCircles(graph)).toEqual(['flow → provider → kinds → flow (import())'])
  })
})
