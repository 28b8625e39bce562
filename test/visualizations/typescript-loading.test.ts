/** The CLI loads a TypeScript `--config` as the running Node can: natively, with the flag, or not. */
import { describe, expect, it } from 'vitest'
import { typeScriptLoading } from '../../visualizations/typescript-loading.js'

describe('typeScriptLoading', () => {
  it.each([
    ['v20.19.0', {}, 'unsupported'],
    ['v22.5.1', {}, 'unsupported'],
    ['v22.6.0', {}, 'flag'],
    ['v22.17.0', {}, 'flag'],
    ['v23.5.0', {}, 'flag'],
    ['v22.18.0', { typescript: 'strip' }, 'native'],
    ['v24.0.0', { typescript: 'strip' }, 'native'],
    ['v25.0.0', { typescript: 'transform' }, 'native'],
  ] as const)('on Node %s with features %j: %s', (version, features, expected) => {
    expect(typeScriptLoading(version, features)).toBe(expected)
  })
})
