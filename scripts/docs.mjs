#!/usr/bin/env node
/**
 * Builds the documentation site (`npm run docs`): the pages generated from the code (one per flow
 * with its chart, one per provider preset, the API reference from the TSDoc of every public entry
 * point, the benchmark page from the committed results), then `vitepress build docs` into `docs/.vitepress/dist`. Nothing here goes into the
 * package: `npm run build` and package.json's `files` do not see `docs/`.
 *
 * Run under the repository's TypeScript loader (`node --import ./test/scale/ts-register.mjs`), so
 * the provider presets are read from their sources, as the tests read them.
 *
 * @module
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { entryPoints } from './docs-entry-points.mjs'
import { needsIssuer, scopeOf } from './catalogue.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const docs = join(root, 'docs')
const charts = join(root, 'visualizations', 'out')

/** Where the TypeDoc model of the reference is written (read by the docs test). */
export const API_JSON = join(docs, '.vitepress', 'api.json')

const fresh = (folder) => {
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
}

/** Markdown text safe inside VitePress (which compiles pages as Vue templates). */
const prose = (text) => String(text ?? '').replace(/\{\{/g, '{\u200b{').replace(/</g, '&lt;')
const code = (text) => `\`${String(text).replace(/`/g, "'")}\``

/** The leading TSDoc block of a source file, as plain Markdown (its `@module` tag dropped). */
function moduleComment(source) {
  const match = /^\/\*\*([\s\S]*?)\*\//.exec(source)
  if (!match) return ''
  return match[1]
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .filter((line) => !line.startsWith('@module'))
    .join('\n')
    .trim()
}

/** A flow's routes as a reader calls them, with what the routing table checks on each. */
function routeLines(routes) {
  if (!routes.length) return ['This flow declares no route of its own: another flow hands over to it.']
  return routes.map((r) => {
    const path = `/auth/${r.action}${r.provider === 'none' ? '' : '/:provider'}`
    const checks = [
      r.provider === 'none' ? null : `for a provider of type ${code(r.provider)}`,
      r.csrf ? 'CSRF-checked' : null,
      r.actsForUser ? 'acts for the signed-in user (through the session authority)' : null,
      r.stepUp ? 'a signed-in user is asked for a recent sign-in first (step-up)' : null,
    ].filter(Boolean)
    return `- ${code(`${r.method} ${path}`)}${checks.length ? `: ${checks.join(', ')}` : ''}`
  })
}

/** Copies the committed charts (generated from the machines by `npm run diagrams`) and writes a page per flow. */
async function flowPages() {
  const { everyFlow } = await import(pathToFileURL(join(root, 'core', 'flows', 'catalogue.ts')).href)
  const routesOf = new Map(everyFlow.map((module) => [module.id, module.routes ?? []]))
  fresh(join(docs, 'public', 'charts'))
  for (const name of readdirSync(join(docs, 'flows'))) {
    if (name !== 'index.md' && name.endsWith('.md')) rmSync(join(docs, 'flows', name))
  }
  const flows = readdirSync(charts)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(charts, name), 'utf8')))
  for (const flow of flows) {
    copyFileSync(join(charts, `${flow.id}.svg`), join(docs, 'public', 'charts', `${flow.id}.svg`))
    const events = [...new Set(flow.transitions.map((t) => t.event).filter(Boolean))].sort()
    const effects = flow.states.filter((s) => s.effect)
    const ends = flow.states.filter((s) => s.kind === 'final')
    const lines = [
      `# Flow: ${flow.id}`,
      '',
      prose(flow.description),
      '',
      `Chart version ${code(flow.version)}. The chart below is drawn from the machine itself (\`npx authchart diagram ${flow.id}\`);`,
      'effect states are blue, states awaiting a request amber, final states double-bordered.',
      '',
      `![The ${flow.id} chart: ${flow.states.length} states](/charts/${flow.id}.svg)`,
      '',
      '## States',
      '',
      '| State | Kind | What happens |',
      '| --- | --- | --- |',
      ...flow.states.map((s) => `| ${code(s.id)}${s.initial ? ' (initial)' : ''} | ${s.kind} | ${prose(s.description).replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`),
      '',
      '## Routes',
      '',
      'Under `basePath` (`/auth`; `/api/auth` with Next.js):',
      '',
      ...routeLines(routesOf.get(flow.id) ?? []),
      '',
      '## Events',
      '',
      ...events.map((event) => `- ${code(event)}`),
      '',
      '## Effects',
      '',
      effects.length ? effects.map((s) => `- ${code(s.effect)} (in ${code(s.id)})`).join('\n') : 'None: this chart decides without calling out.',
      '',
      '## How it ends',
      '',
      ...ends.map((s) => `- ${code(s.id)}: ${prose(s.description).replace(/\n/g, ' ')}`),
      '',
    ]
    writeFileSync(join(docs, 'flows', `${flow.id}.md`), lines.join('\n'))
  }
  return flows.map((flow) => flow.id)
}

/** One page per provider file, from what its factory returns and its module comment. */
async function providerPages() {
  const folder = join(docs, 'providers')
  fresh(folder)
  const rows = []
  for (const name of readdirSync(join(root, 'providers')).filter((n) => n.endsWith('.ts')).sort()) {
    const file = name.slice(0, -3)
    const source = readFileSync(join(root, 'providers', name), 'utf8')
    const module = await import(pathToFileURL(join(root, 'providers', name)).href)
    let provider
    try {
      provider = typeof module.default === 'function' ? module.default({}) : undefined
    } catch {
      provider = undefined
    }
    const id = provider?.id ?? file
    const type = provider?.type ?? 'generic'
    const lines = [`# ${prose(provider?.name ?? file)}`, '', moduleComment(source).replace(/\{@link ([^}]+)\}/g, '`$1`'), '', '| | |', '| --- | --- |']
    lines.push(`| Import | ${code(`import ${toIdentifier(file)} from 'authchart/providers/${file}'`)} |`)
    lines.push(`| Id | ${code(id)} |`, `| Type | ${code(type)} |`)
    let env = []
    if (type === 'oauth' || type === 'oidc') {
      const key = `AUTH_${id.toUpperCase().replace(/-/g, '_')}`
      env = [`${key}_ID`, `${key}_SECRET`, ...(needsIssuer(provider) ? [`${key}_ISSUER`] : [])]
      const scope = scopeOf(provider.authorization)
      lines.push(`| Callback URL | ${code(`https://<your-host>/auth/callback/${id}`)} (Next.js: ${code(`/api/auth/callback/${id}`)}) |`)
      lines.push(`| Checks | ${(provider.checks ?? ['pkce']).join(', ')} |`)
      lines.push(`| Scope | ${scope === '' ? '(none)' : code(scope)} |`)
      lines.push(`| Client authentication | ${code(provider.client?.token_endpoint_auth_method ?? 'client_secret_basic')} |`)
      lines.push(`| Environment | ${env.map(code).join(' ')} |`)
    } else if (type === 'email') {
      lines.push(`| Callback URL | ${code(`https://<your-host>/auth/callback/${id}`)} (the link in the e-mail) |`)
    } else if (type === 'webauthn') {
      lines.push(`| Routes | ${code(`GET /auth/webauthn-options/${id}`)}, ${code(`POST /auth/callback/${id}`)} |`)
    } else if (type === 'credentials') {
      lines.push(`| Route | ${code(`POST /auth/callback/${id}`)} |`)
    }
    lines.push('', `Its options, fully typed: [${code(`authchart/providers/${file}`)} in the API reference](../reference/authchart/providers/${file}).`, '')
    writeFileSync(join(folder, `${file}.md`), lines.join('\n'))
    rows.push(`| [${prose(provider?.name ?? file)}](./${file}) | ${code(id)} | ${type} | ${env.map(code).join(' ') || '–'} |`)
  }
  writeFileSync(
    join(folder, 'index.md'),
    [
      '# Providers',
      '',
      'Every preset of `authchart/providers/*`, generated from the provider files. An OAuth preset reads its',
      'client id and secret from `AUTH_<ID>_ID` and `AUTH_<ID>_SECRET` when the config leaves them out.',
      '',
      '| Provider | Id | Type | Environment |',
      '| --- | --- | --- | --- |',
      ...rows,
      '',
    ].join('\n'),
  )
  return rows.length
}

/** The committed results the benchmark page is drawn from (the docs build never runs the bench). */
export const PUBLISHED_BENCH = join(root, 'bench', 'results', 'published.json')

const times = (value, digits = 1) => (typeof value === 'number' && Number.isFinite(value) ? `${value.toFixed(digits)}×` : '–')
const number = (value, digits = 0) => (typeof value === 'number' && Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits }) : '–')
const cell = (text) => prose(text).replace(/\|/g, '\\|')

/**
 * A scenario's ratios: authchart's operations per second over each peer's (higher is faster) and
 * the peer's CPU per operation over authchart's (higher is cheaper). Scenarios that measure two
 * libraries without a ratio in the report (the password hashes) get it from their measurements.
 */
function scenarioRatios(scenario) {
  const measured = Object.entries(scenario.measured ?? {})
  const ratio = (ours, theirs) => ours && theirs && { speedUp: ours.opsPerSec / theirs.opsPerSec, cpu: theirs.cpuUsPerOp / ours.cpuUsPerOp }
  const vsAuthjs = scenario.vsAuthjs
  let vsBetterAuth = scenario.vsBetterAuth
  if (!vsAuthjs && !vsBetterAuth && measured.length === 2 && measured[1][0].startsWith('better-auth')) {
    vsBetterAuth = ratio(measured[0][1], measured[1][1])
  }
  return { vsAuthjs, vsBetterAuth }
}

/** The benchmark page, from the committed results of `node bench/run.js --json`. */
export function benchmarkPage() {
  const report = JSON.parse(readFileSync(PUBLISHED_BENCH, 'utf8'))
  const load = /load average ([\d. ]+) before \/ ([\d. ]+) after/.exec(report.environment ?? '')
  const rows = report.scenarios.map((scenario) => {
    const { vsAuthjs, vsBetterAuth } = scenarioRatios(scenario)
    const ours = scenario.name === 'floor' ? { cpuUsPerOp: report.floor?.sessionReadCpuUs } : Object.entries(scenario.measured ?? {})[0]?.[1]
    let note = scenario.target === undefined || scenario.target === null ? '' : `target ≥ ${scenario.target}× @auth/core`
    if (scenario.name === 'floor') {
      note = `session read ${times(report.floor?.multiple, 2)} its floor, sign-in ${times(report.signInFloor?.multiple, 2)} its floor (target ≤ 1.5×)`
    } else if (scenario.name === 'http-session' && typeof scenario.fractionOfFloor === 'number') {
      note = `${(scenario.fractionOfFloor * 100).toFixed(0)} % of the floor route's requests/s (target ≥ 90 %)`
    } else if (scenario.betterAuthFastest && scenario.betterAuthFastest !== 'better-auth' && vsBetterAuth) {
      note = [note, `against ${scenario.betterAuthFastest}`].filter(Boolean).join('; ')
    }
    return `| ${code(scenario.name)} | ${cell(scenario.title)} | ${number(ours?.cpuUsPerOp, 1)} | ${times(vsAuthjs?.speedUp)} | ${times(vsAuthjs?.cpu)} | ${times(vsBetterAuth?.speedUp)} | ${times(vsBetterAuth?.cpu)} | ${cell(note)} |`
  })
  const cold = report.coldStart?.handlers ?? []
  const bundles = report.edge?.bundles ?? []
  const runtimes = Object.entries(report.edge?.runtimes ?? {})
  const lines = [
    '# Benchmarks',
    '',
    'authchart next to `@auth/core` and better-auth, in one process, on the same configuration.',
    `These numbers are the committed results of one run (\`bench/results/published.json\`, ${prose(report.date)});`,
    'this page is drawn from that file when the site is built, and the build never runs the bench.',
    '',
    '## The machine',
    '',
    `${prose(report.environment)}.`,
    '',
    load
      ? `The machine was shared while it ran: its load average was ${load[1].trim()} before and ${load[2].trim()} after (1, 5 and 15 minutes) on ${prose(/(\d+) ×/.exec(report.environment)?.[1] ?? 'its')} cores, so other work took turns with the rounds. The rounds interleave the libraries, so that load hits all of them alike: read the ratios, not the absolute numbers.`
      : 'Read the ratios, not the absolute numbers: they move much less with the machine.',
    '',
    '## Method',
    '',
    `- **Interleaved rounds**: every round gives each library the same time budget (${number(report.timing?.rounds)} rounds of ${number(report.timing?.budgetMs)} ms after ${number(report.timing?.warmupMs)} ms of warm-up in this run), the one that goes first alternating, so drift (JIT, GC, the load of the machine) hits each alike. Reported numbers are medians of rounds.`,
    '- **Speed-up** is authchart\'s operations per second over the peer\'s in the same run; **CPU** is the peer\'s process CPU time (user + system) per operation over authchart\'s. Above 1× authchart is faster or cheaper.',
    '- Every scenario checks its result once before it is timed (a session body with the user, a sign-in redirect without an error), so no scenario times an error path.',
    '- A peer without the operation (better-auth has no CSRF route, no OIDC relying party in this bench) shows –.',
    '- Details of every scenario: `bench/README.md`.',
    '',
    '## Every scenario',
    '',
    '| Scenario | One operation | authchart CPU µs/op (floor: the session read) | vs @auth/core: speed-up | vs @auth/core: CPU | vs better-auth: speed-up | vs better-auth: CPU | Note |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ]
  if (cold.length) {
    lines.push(
      '## Cold start on Node',
      '',
      `A fresh process per measurement (median of ${number(report.coldStart.processes)}): \`import\` of the credentials-only handler and the first session read, above a bare handler.`,
      '',
      '| Handler | Wall ms above bare | CPU ms above bare | Files loaded |',
      '| --- | --- | --- | --- |',
      ...cold.map((h) => `| ${cell(h.name)} | ${number(h.aboveBare?.coldMs, 1)} | ${number(h.aboveBare?.cpuMs, 1)} | ${number(h.loaded?.files)} |`),
      '',
    )
  }
  if (bundles.length) {
    lines.push(
      '## Bundle size',
      '',
      'esbuild, minified; authchart over @auth/core (lower is smaller).',
      '',
      '| Target | Configuration | authchart KiB (gzipped) | @auth/core KiB (gzipped) | Ratio (gzipped) |',
      '| --- | --- | --- | --- | --- |',
      ...bundles.map(
        (b) =>
          `| ${cell(b.target)} | ${cell(b.configuration)} | ${number(b.authchart.bytes / 1024)} (${number(b.authchart.gzipBytes / 1024)}) | ${number(b.authjs.bytes / 1024)} (${number(b.authjs.gzipBytes / 1024)}) | ${times(b.ratio, 2)} (${times(b.gzipRatio, 2)}) |`,
      ),
      '',
    )
  }
  if (runtimes.length) {
    lines.push(
      '## Edge runtimes',
      '',
      'The credentials-only bundle per runtime: cold start above a bare handler, then a warm session read.',
      '',
      '| Runtime | Cold ms above bare: authchart | @auth/core | Session read µs: authchart | @auth/core |',
      '| --- | --- | --- | --- | --- |',
      ...runtimes.map(
        ([name, r]) => `| ${cell(name)} | ${number(r.aboveBareMs?.authchart, 1)} | ${number(r.aboveBareMs?.authjs, 1)} | ${number(r.sessionReadUs?.authchart, 1)} | ${number(r.sessionReadUs?.authjs, 1)} |`,
      ),
      '',
    )
  }
  if (report.cookieSize) {
    lines.push('## Session cookie', '', `After the same credentials sign-in: authchart ${number(report.cookieSize.authchart)} bytes, @auth/core ${number(report.cookieSize.authjs)} bytes.`, '')
  }
  lines.push(
    '## Reproduce',
    '',
    'From a checkout, with the dev dependencies installed (the peers are among them):',
    '',
    '```sh',
    'npm run build && node bench/run.js --quick --json > bench/results/published.json',
    '```',
    '',
    'Without `--quick` the rounds are longer (7 of 600 ms); `npm run bench` prints the same report as tables. The numbers will differ on your machine; the ratios should not by much.',
    '',
  )
  writeFileSync(join(docs, 'benchmarks.md'), lines.join('\n'))
  return report.scenarios.length
}

const toIdentifier = (file) => file.replace(/(^|-)(\w)/g, (_, __, c) => c.toUpperCase())

/** The API reference: TypeDoc over every public entry point, as Markdown pages and as JSON. */
async function reference() {
  const { Application, Converter } = await import('typedoc')
  const points = entryPoints()
  const bySource = new Map(points.map(([subpath, source]) => [join(root, source), subpath]))
  const app = await Application.bootstrapWithPlugins({
    entryPoints: points.map(([, source]) => join(root, source)),
    tsconfig: join(root, 'tsconfig.docs.json'),
    plugin: ['typedoc-plugin-markdown'],
    outputs: [
      { name: 'markdown', path: join(docs, 'reference') },
      { name: 'json', path: API_JSON },
    ],
    outputFileStrategy: 'modules',
    entryFileName: 'index',
    readme: 'none',
    hidePageHeader: true,
    hideBreadcrumbs: true,
    useCodeBlocks: true,
    // Anchors of their own, so links into a page do not depend on how the site slugs a heading.
    useHTMLAnchors: true,
    disableSources: true,
    skipErrorChecking: true,
    excludePrivate: true,
    excludeInternal: true,
    sort: ['source-order'],
    validation: { notExported: false, invalidLink: false, notDocumented: false },
    logLevel: 'Error',
  })
  // Each module is named after the subpath an application imports (`authchart/providers/github`).
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.children ?? []) {
      const file = context.getSymbolFromReflection(module)?.declarations?.[0]?.getSourceFile().fileName
      const subpath = file && bySource.get(file)
      if (!subpath) throw new Error(`No package subpath for the module ${module.name}`)
      module.name = subpath
    }
  })
  const project = await app.convert()
  if (!project) throw new Error('TypeDoc could not read the entry points')
  // A member inherited from a base type is documented on the base's entry; repeating it on every
  // subclass (each error class carries all of Error's) made the reference several times its size.
  for (const reflection of Object.values(project.reflections)) {
    if (reflection.inheritedFrom && project.getReflectionById(reflection.id)) project.removeReflection(reflection)
  }
  const kept = (list) => list.filter((child) => project.getReflectionById(child.id))
  for (const reflection of Object.values(project.reflections)) {
    for (const group of reflection.groups ?? []) {
      group.children = kept(group.children)
      for (const category of group.categories ?? []) category.children = kept(category.children)
    }
    for (const category of reflection.categories ?? []) category.children = kept(category.children)
  }
  fresh(join(docs, 'reference'))
  await app.generateOutputs(project)
  return points.length
}

async function main() {
  const flows = await flowPages()
  const providers = await providerPages()
  const modules = await reference()
  const scenarios = benchmarkPage()
  console.log(`docs: ${flows.length} flow pages, ${providers} provider pages, ${modules} reference modules, ${scenarios} benchmark scenarios`)
  if (process.argv.includes('--generate-only')) return
  const { build } = await import('vitepress')
  await build(docs)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
