/**
 * Whether the running Node can import a TypeScript module (the CLI's `--config ./auth.ts`).
 *
 * @module
 */

/** How this Node loads a TypeScript module: natively, with the strip-types flag, or not at all. */
export type TypeScriptLoading = 'native' | 'flag' | 'unsupported'

/**
 * Node strips types by default from 22.18 and 23.6 (`process.features.typescript`); from 22.6 it
 * does behind `--experimental-strip-types`; before that it cannot load `.ts`.
 */
export function typeScriptLoading(version: string, features: { typescript?: unknown }): TypeScriptLoading {
  if (features.typescript) return 'native'
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number)
  return major > 22 || (major === 22 && minor >= 6) ? 'flag' : 'unsupported'
}
