// StrykerJS over the security checks (issue 12): `npm run mutate` runs every group below in turn,
// `npm run mutate -- csrf oauth` only those. Each group mutates a few modules and runs only the test
// files that exercise them, so a mutant costs seconds, not a whole suite; coverage is per test, so
// a mutant runs only the tests that reached it. Reports go to reports/mutation/<group>/ (gitignored);
// scripts/mutate.mjs writes test/mutation/SUMMARY.md from them.

/** Mutated modules (whole files, or `file:from-to` line ranges) and the tests that guard them. */
export const groups = {
  csrf: {
    mutate: ['core/http/csrf.ts', 'core/crypto.ts:36-41'],
    tests: ['test/core/csrf.test.ts', 'test/mutation/csrf.test.ts'],
  },
  envelope: {
    mutate: ['core/engine/envelope.ts', 'core/jwe-gcm.ts'],
    tests: ['test/core/envelope.test.ts', 'test/core/resume.test.ts', 'test/mutation/envelope.test.ts', 'test/mutation/webcrypto.test.ts'],
  },
  jwt: {
    mutate: ['core/jwt.ts', 'core/jwe-cbc.ts'],
    tests: ['test/core/jwt.test.ts', 'test/mutation/jwt.test.ts', 'test/mutation/webcrypto.test.ts'],
  },
  cookies: {
    mutate: ['core/cookies.ts'],
    tests: ['test/core/session.test.ts', 'test/core/signout.test.ts', 'test/mutation/cookies.test.ts', 'test/mutation/session.test.ts'],
  },
  redirect: {
    mutate: ['core/http/dispatch.ts:49-56', 'core/http/dispatch.ts:87-114', 'core/flows/callbacks.ts:12-25', 'core/config/origins.ts'],
    // Every request resolves its callback URL: each of these tests covers every mutant of dispatch.ts,
    // so the group keeps to the files about redirects (hardening.test.ts repeats them at a cost).
    tests: ['test/core/routing.test.ts', 'test/security/redirect-proxy-origins.test.ts', 'test/mutation/redirect.test.ts'],
  },
  oauth: {
    // The checks: protected parameters, callback URL and redirect proxy, state/PKCE/nonce, the code
    // exchange and ID token signature, account linking. Not the profile mapping around them.
    mutate: [
      'core/flows/oauth.ts:42-163',
      'core/flows/oauth.ts:264-343',
      'core/oauth/exchange.ts:58-112',
      'core/oauth/server.ts:14-23',
      'core/oauth/server.ts:134-171',
    ],
    tests: [
      'test/oauth/oidc-signin.test.ts',
      'test/oauth/attacks.test.ts',
      'test/oauth/redirect-proxy.test.ts',
      'test/security/redirect-proxy-takeover.test.ts',
      'test/security/jwks-rotation.test.ts',
      'test/mutation/oauth.test.ts',
    ],
  },
  // Account linking after an OAuth sign-in: which user an account may be linked to.
  linking: {
    mutate: ['core/flows/oauth.ts:208-258', 'core/session/token.ts:39-57'],
    tests: ['test/oauth/linking.test.ts', 'test/machines/signin-completion.model.test.ts'],
  },
  session: {
    // Expiry: when a session is over, extended or re-issued, and the expiry each one carries.
    mutate: [
      'machines/session.machine.ts:209-218',
      'machines/session.machine.ts:256-265',
      'machines/session.machine.ts:314-342',
      'core/session/current.ts',
      'core/session/issue.ts:97-100',
      'core/session/issue.ts:107-124',
      'core/flows/session.ts:192-240',
    ],
    tests: [
      'test/core/session.test.ts',
      'test/core/database-session.test.ts',
      'test/machines/session.model.test.ts',
      'test/mutation/session.test.ts',
    ],
  },
}

const names = (process.env.MUTATE_GROUPS ?? Object.keys(groups).join(',')).split(',')
const unknown = names.filter((name) => !(name in groups))
if (unknown.length > 0) throw new Error(`unknown mutation group(s): ${unknown.join(', ')}`)

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
  mutate: names.flatMap((name) => groups[name].mutate),
  // The tests are chosen by test/mutation/vitest.config.ts (from MUTATE_GROUPS), not with Stryker's
  // `testFiles`: with `testFiles`, Stryker 9.6 activates static mutants (module-level constants,
  // regular expressions) only after the modules have loaded, so they always survive.
  coverageAnalysis: 'perTest',
  // Two cores shared with the other work on the machine: one test runner at a time by default.
  concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 1),
  // A mutant that makes a sign-in wait on the provider times out rather than hold the run.
  timeoutMS: 8_000,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${names.join('+')}/index.html` },
  jsonReporter: { fileName: `reports/mutation/${names.join('+')}/mutation.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  ignorePatterns: ['dist', 'reports', '.demo-data', 'bench', 'examples/*/node_modules', 'visualizations/out'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  thresholds: { high: 95, low: 90, break: null },
}
