import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import base from '../../vitest.config.js'
import { groups } from './groups.mjs'

const names = (process.env.MUTATE_GROUPS ?? Object.keys(groups).join(',')).split(',')

/**
 * The vitest config StrykerJS runs the mutation groups with (`npm run mutate`): the suite's own
 * aliases and timeouts, one project holding only the test files of the groups in MUTATE_GROUPS,
 * without the model-coverage summary (its records live in the
 * shared node_modules/.cache, which a mutation run must not clear under a concurrent `npm test`).
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: base.resolve,
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Only the test files of the mutation groups being run.
    include: [...new Set(names.flatMap((name) => groups[name]?.tests ?? []))],
    // Model tests under a mutant must not leave coverage records for a concurrent `npm test`.
    env: { AUTHCHART_MODEL_COVERAGE: 'off' },
    // The store's servers start once per run, not once per mutant (test/mutation/servers.ts).
    globalSetup: names.some((name) => name === 'stores' || name === 'adapters') ? ['test/mutation/servers.ts'] : [],
  },
})
