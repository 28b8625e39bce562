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
      { find: /^authchart\/audit$/, replacement: source('./core/audit.ts') },
      { find: /^authchart\/telemetry$/, replacement: source('./core/telemetry.ts') },
      { find: /^authchart\/inspector$/, replacement: source('./core/inspector.ts') },
      { find: /^authchart\/second-factor$/, replacement: source('./core/second-factor.ts') },
      { find: /^authchart\/step-up$/, replacement: source('./core/step-up.ts') },
      { find: /^authchart\/organizations$/, replacement: source('./core/organizations.ts') },
      { find: /^authchart\/api-keys$/, replacement: source('./core/api-keys.ts') },
      { find: /^authchart\/service-accounts$/, replacement: source('./core/service-accounts.ts') },
      { find: /^authchart\/device-authorization$/, replacement: source('./core/device-authorization.ts') },
      { find: /^authchart\/password$/, replacement: source('./core/password/index.ts') },
      { find: /^authchart\/extensions$/, replacement: source('./core/define-extension.ts') },
      { find: /^authchart\/adapters$/, replacement: source('./core/adapters.ts') },
      { find: /^authchart\/adapters\/(.+)$/, replacement: source('./adapters/$1.ts') },
      { find: /^authchart\/stores\/(.+)$/, replacement: source('./stores/$1.ts') },
      { find: /^authchart\/machines$/, replacement: source('./machines/index.ts') },
      { find: /^authchart\/fastify$/, replacement: source('./integrations/fastify/index.ts') },
      { find: /^authchart\/express$/, replacement: source('./integrations/express/index.ts') },
      { find: /^authchart\/providers\/(.+)$/, replacement: source('./providers/$1.ts') },
      { find: /^authchart\/extensions\/(.+)$/, replacement: source('./extensions/$1.ts') },
      { find: /^authchart\/testing$/, replacement: source('./testing/index.ts') },
    ],
  },
  test: {
    // Vitest's default is one worker fewer than the cores: one on a 2-core CI machine. Most files
    // wait on servers, browsers and databases of their own, so two share 2 cores well (each file
    // starts its servers on port 0 and keeps its data in its own temporary directory).
    maxWorkers: 2,
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
