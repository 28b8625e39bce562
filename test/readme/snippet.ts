/**
 * Loading README snippets (`examples/readme/*.ts`) in tests: they read their settings from
 * `process.env` when imported, so each is imported with the environment the test gives, which is
 * restored afterwards.
 *
 * @module
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/** The folder of the snippets. */
export const SNIPPETS_DIR = join(process.cwd(), 'examples', 'readme')

/** The snippet files, by name (`auth.ts`, …). */
export function snippetNames(): string[] {
  return readdirSync(SNIPPETS_DIR).filter((name) => name.endsWith('.ts')).sort()
}

/** Imports `examples/readme/<name>` with `env` set (and restored afterwards). */
export async function loadSnippet<T = Record<string, unknown>>(name: string, env: Record<string, string>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]))
  Object.assign(process.env, env)
  try {
    return (await import(/* @vite-ignore */ join(SNIPPETS_DIR, name))) as T
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  }
}

/**
 * The compiler options `tsc --init` writes (TypeScript 5.9 and 7 alike), which an application
 * made today starts from. test/package/fresh-app.test.ts fails when `tsc --init` writes others.
 */
export const TSC_INIT_OPTIONS = {
  module: 'nodenext',
  target: 'esnext',
  types: [],
  sourceMap: true,
  declaration: true,
  declarationMap: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  strict: true,
  jsx: 'react-jsx',
  verbatimModuleSyntax: true,
  isolatedModules: true,
  noUncheckedSideEffectImports: true,
  moduleDetection: 'force',
  skipLibCheck: true,
} as const
