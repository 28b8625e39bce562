import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  resolve: {
    // Tests (and the demo they start) run against the sources; the package test checks dist/.
    alias: [
      { find: /^authchart$/, replacement: source('./core/index.ts') },
      { find: /^authchart\/jwt$/, replacement: source('./core/jwt.ts') },
      { find: /^authchart\/errors$/, replacement: source('./core/errors.ts') },
      { find: /^authchart\/adapters$/, replacement: source('./core/adapters.ts') },
      { find: /^authchart\/adapters\/(.+)$/, replacement: source('./adapters/$1.ts') },
      { find: /^authchart\/machines$/, replacement: source('./machines/index.ts') },
      { find: /^authchart\/fastify$/, replacement: source('./integrations/fastify/index.ts') },
      { find: /^authchart\/express$/, replacement: source('./integrations/express/index.ts') },
      { find: /^authchart\/providers\/(.+)$/, replacement: source('./providers/$1.ts') },
      { find: /^authchart\/extensions\/(.+)$/, replacement: source('./extensions/$1.ts') },
      { find: /^authchart\/testing$/, replacement: source('./testing/index.ts') },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/apps/**'],
          globalSetup: ['test/setup/model-coverage.ts'],
        },
      },
      {
        // The example apps, installed from the packed package, built and started once per run by
        // the global setup (which runs only when a test of this project is selected).
        extends: true,
        test: {
          name: 'apps',
          include: ['test/apps/**/*.test.ts'],
          globalSetup: ['test/apps/setup.ts'],
        },
      },
    ],
  },
})
