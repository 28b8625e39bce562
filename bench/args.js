// The command line of `npm run bench`, apart from the scenarios themselves so that it can be
// tested without loading any library.
import { parseArgs } from 'node:util'

/** The cases that are not in-process scenarios (`bench/scenarios.js`), in the order they run. */
export const OTHER_CASES = ['http-session', 'cold-start', 'edge-bundle', 'edge-runtimes', 'cookie-size']

/** What `--ab` measures when `--only` does not say: the cases the A/B section of the README names. */
export const AB_CASES = ['session-jwt', 'credentials-signin', 'http-session', 'cold-start']

const OPTIONS = {
  quick: { type: 'boolean' },
  only: { type: 'string' },
  json: { type: 'boolean' },
  baseline: { type: 'string' },
  ab: { type: 'boolean' },
  'ab-rev': { type: 'string' },
  runtimes: { type: 'string' },
  processes: { type: 'string' },
  http: { type: 'boolean' },
}

/**
 * Parses the bench's arguments. `known` is every case name `--only` may select; an unknown name is
 * an error (a typo would otherwise select nothing and report an empty table). `--ab-rev` implies
 * `--ab`; `--ab` and `--baseline` exclude each other (both name the baseline). Returns the options
 * and `wanted(name)`, true for the cases to run.
 */
export function parseBenchArgs(argv, known) {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false })
  const ab = Boolean(values.ab || values['ab-rev'] !== undefined)
  if (ab && values.baseline !== undefined) throw new Error('--ab and --baseline both name the baseline: give one of them')
  if (values['ab-rev'] === '') throw new Error('--ab-rev needs a revision (a commit, a tag or a branch)')
  const listed = values.only?.split(',').map((name) => name.trim()).filter(Boolean)
  if (values.only !== undefined && listed.length === 0) throw new Error('--only needs at least one case name')
  const unknown = (listed ?? []).filter((name) => !known.includes(name))
  if (unknown.length > 0) throw new Error(`--only: unknown case${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the cases are ${known.join(', ')}`)
  const processes = values.processes === undefined ? undefined : Number(values.processes)
  if (processes !== undefined && !(Number.isInteger(processes) && processes >= 1)) throw new Error('--processes needs a whole number of at least 1')
  const selected = new Set(listed ?? (ab ? AB_CASES : known))
  return {
    quick: Boolean(values.quick),
    json: Boolean(values.json),
    http: Boolean(values.http),
    baseline: values.baseline,
    ab,
    abRev: values['ab-rev'],
    runtimes: values.runtimes?.split(','),
    processes,
    only: listed,
    wanted: (name) => selected.has(name),
  }
}
