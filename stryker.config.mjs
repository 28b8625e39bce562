// StrykerJS over the security checks (issue 12): `npm run mutate` runs every group of
// test/mutation/groups.mjs in turn, `npm run mutate -- csrf oauth` only those. Each group mutates a few modules and runs only the test
// files that exercise them, so a mutant costs seconds, not a whole suite; coverage is per test, so
// a mutant runs only the tests that reached it. Reports go to reports/mutation/<group>/ (gitignored);
// test/mutation/run.mjs writes test/mutation/SUMMARY.md from them.
// The time budget: the whole run is held to 30 minutes on 2 cores by keeping each group's test
// list to fast files (memory adapter and store), by leaving out mutators whose mutants are static
// and cheap to kill elsewhere (a group's `excludedMutations`), by two test runners on an idle
// machine, and, where one machine is not enough, by `npm run mutate -- --part k/n`.

import { availableParallelism, loadavg } from 'node:os'
import { groups, toStrykerPattern } from './test/mutation/groups.mjs'

export { groups }

const names = (process.env.MUTATE_GROUPS ?? Object.keys(groups).join(',')).split(',')
const unknown = names.filter((name) => !(name in groups))
if (unknown.length > 0) throw new Error(`unknown mutation group(s): ${unknown.join(', ')}`)

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
  mutate: names.flatMap((name) => groups[name].mutate.map((entry) => toStrykerPattern(entry))),
  // The tests are chosen by test/mutation/vitest.config.ts (from MUTATE_GROUPS), not with Stryker's
  // `testFiles`: with `testFiles`, Stryker 9.6 activates static mutants (module-level constants,
  // regular expressions) only after the modules have loaded, so they always survive.
  // A group may leave some mutators out (see its comment); groups run together keep only the
  // exclusions they all share.
  mutator: {
    excludedMutations: names
      .map((name) => groups[name].excludedMutations ?? [])
      .reduce((shared, excluded) => shared.filter((mutator) => excluded.includes(mutator))),
  },
  coverageAnalysis: 'perTest',
  // A group may leave out its static mutants (code run when its modules load, e.g. a chart's
  // definition): each reruns the group's whole test list. Only when every group run together does.
  ignoreStatic: names.every((name) => groups[name].ignoreStatic === true),
  // One test runner per core when the machine is otherwise idle (load under 1), one alone when
  // other work shares it; MUTATE_CONCURRENCY says how many.
  concurrency: Number(process.env.MUTATE_CONCURRENCY ?? (loadavg()[0] < 1 ? Math.min(2, availableParallelism()) : 1)),
  // A mutant that makes a sign-in wait on the provider times out rather than hold the run.
  timeoutMS: 8_000,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${names.join('+')}/index.html` },
  jsonReporter: { fileName: `reports/mutation/${names.join('+')}/mutation.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  ignorePatterns: ['dist', 'reports', '.demo-data', 'bench', 'examples/*/node_modules', 'test/runtimes/node_modules', 'visualizations/out'],
  // Each group keeps its last results in test/mutation/incremental/<group>.json (committed): a run
  // reruns only the mutants whose code or covering tests changed since, and reuses the rest.
  // `npm run mutate -- --full` (Stryker's --force) reruns every mutant and rewrites the file.
  incremental: true,
  incrementalFile: `test/mutation/incremental/${names.join('+')}.json`,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  thresholds: { high: 95, low: 90, break: null },
}
