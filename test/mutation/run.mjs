// `npm run mutate [-- group …]`: runs StrykerJS over each mutation group of stryker.config.mjs in
// turn (each with only its own test files), then writes test/mutation/SUMMARY.md from the JSON
// reports in reports/mutation/. `--summary` only rewrites the summary from the reports at hand.
// `--part k/n` runs the k-th of n parts of the groups (every n-th group from the k-th), so that n
// machines, or n runs, share the work; the summary then covers every report at hand.
// Runs are incremental: each group reuses the results kept in test/mutation/incremental/<group>.json
// for every mutant whose code and covering test files are unchanged, and reruns the rest. `--full`
// reruns every mutant (after a change outside the mutated and test files, e.g. a shared helper,
// which the incremental comparison cannot see).
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { groups } from './groups.mjs'

const args = process.argv.slice(2)
const summaryOnly = args.includes('--summary')
const full = args.includes('--full')
const partArg = args.find((arg) => arg.startsWith('--part'))
const partText = partArg === '--part' ? args[args.indexOf(partArg) + 1] : partArg?.slice('--part='.length)
const chosen = args.filter((arg, i) => !arg.startsWith('--') && !(args[i - 1] === '--part'))
const unknown = chosen.filter((name) => !(name in groups))
if (unknown.length > 0) {
  console.error(`unknown group(s): ${unknown.join(', ')}; groups: ${Object.keys(groups).join(', ')}`)
  process.exit(2)
}
let names = chosen.length > 0 ? chosen : Object.keys(groups)
if (partArg !== undefined) {
  const [part, parts] = (partText ?? '').split('/').map(Number)
  if (!Number.isInteger(part) || !Number.isInteger(parts) || part < 1 || part > parts) {
    console.error(`--part takes k/n with 1 <= k <= n, got "${partText}"`)
    process.exit(2)
  }
  names = names.filter((_name, index) => index % parts === part - 1)
}

/** Groups whose run failed in this invocation, with how (their report is gone, not stale). */
const failed = new Map()
if (!summaryOnly) {
  for (const name of names) {
    const started = Date.now()
    console.log(`\n=== mutation group "${name}": ${groups[name].mutate.join(', ')}`)
    // A failed run must not leave the previous run's report behind to be summarised as current.
    rmSync(`reports/mutation/${name}`, { recursive: true, force: true })
    const run = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs', ...(full ? ['--force'] : [])], {
      stdio: 'inherit',
      env: { ...process.env, MUTATE_GROUPS: name },
    })
    keepIncrementalFile(`test/mutation/incremental/${name}.json`)
    console.log(`=== group "${name}" took ${Math.round((Date.now() - started) / 1000)} s (exit ${run.status ?? run.signal})`)
    // The other groups still run: one failing group (a failing test in its initial run, a
    // timeout) must not leave every later group out of the summary.
    if (run.status !== 0) failed.set(name, run.status ?? run.signal)
  }
}

/**
 * Leaves in a group's incremental file only what the comparison needs (mutants and tests by file),
 * with paths relative to the repository, so that it can be committed and reused on any checkout.
 */
function keepIncrementalFile(file) {
  if (!existsSync(file)) return
  const { config: _config, framework: _framework, ...kept } = JSON.parse(readFileSync(file, 'utf8'))
  writeFileSync(file, `${JSON.stringify({ ...kept, projectRoot: '.' }, null, 1)}\n`)
}

/** Killed (or timed out) over every mutant that ran or had no test; ignored ones are left out. */
function tally(mutants) {
  const count = (...statuses) => mutants.filter((m) => statuses.includes(m.status)).length
  const detected = count('Killed', 'Timeout')
  const undetected = count('Survived', 'NoCoverage')
  return {
    detected,
    timedOut: count('Timeout'),
    survived: count('Survived'),
    noCoverage: count('NoCoverage'),
    ignored: count('Ignored'),
    errors: count('CompileError', 'RuntimeError'),
    score: detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected),
  }
}

const rows = []
const all = []
const missing = []
for (const name of Object.keys(groups)) {
  const file = `reports/mutation/${name}/mutation.json`
  if (!existsSync(file)) {
    missing.push(failed.has(name) ? `\`${name}\` (run failed: exit ${failed.get(name)})` : `\`${name}\` (not run)`)
    continue
  }
  const reportDate = statSync(file).mtime.toISOString().slice(0, 16).replace('T', ' ')
  const report = JSON.parse(readFileSync(file, 'utf8'))
  for (const [path, { mutants }] of Object.entries(report.files)) {
    rows.push({ group: name, path, reportDate, ...tally(mutants) })
    all.push(...mutants)
  }
}
if (rows.length === 0) {
  console.error('no reports under reports/mutation/: run `npm run mutate` first')
  process.exit(1)
}
const total = tally(all)
const line = (r) =>
  `| ${r.group} | \`${r.path}\` | ${r.reportDate} | ${r.detected} | ${r.timedOut} | ${r.survived} | ${r.noCoverage} | ${r.ignored} | ${r.score.toFixed(1)} % |`
const summary = `# Mutation testing summary

Written by \`npm run mutate\` (StrykerJS, \`stryker.config.mjs\`) from the reports in
\`reports/mutation/\` on ${new Date().toISOString().slice(0, 10)}. Score: killed (or timed out) mutants over
killed + survived + uncovered; mutants marked \`// Stryker disable\` (each with a key into \`test/mutation/equivalent.md\`,
which says why it is equivalent) and those of mutators a group leaves out (its \`excludedMutations\` in
\`test/mutation/groups.mjs\`) are not counted: the "disabled" column.

| group | file | report (UTC) | killed or timed out | of which timed out | survived | no coverage | disabled | score |
|---|---|---|---:|---:|---:|---:|---:|---:|
${rows.map(line).join('\n')}
| **all** | | | **${total.detected}** | **${total.timedOut}** | **${total.survived}** | **${total.noCoverage}** | **${total.ignored}** | **${total.score.toFixed(1)} %** |
${missing.length > 0 ? `\nNo report for: ${missing.join(', ')}.\n` : ''}`
writeFileSync('test/mutation/SUMMARY.md', summary)
console.log(summary)
if (failed.size > 0) process.exit(1)
