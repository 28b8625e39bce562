import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import base from '../../vitest.config.js'

/**
 * The vitest config StrykerJS runs the mutation groups with (`npm run mutate`): the suite's own
 * aliases and timeouts, one project, without the model-coverage summary (its records live in the
 * shared node_modules/.cache, which a mutation run must not clear under a concurrent `npm test`).
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: base.resolve,
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    include: ['test/**/*.test.ts'],
    exclude: ['test/apps/**'],
  },
})
