#!/usr/bin/env node
/**
 * Builds the documentation site (`npm run docs`): the pages generated from the code (one per flow
 * with its chart, one per provider preset, the API reference from the TSDoc of every public entry
 * point), then `vitepress build docs` into `docs/.vitepress/dist`. Nothing here goes into the
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
  console.log(`docs: ${flows.length} flow pages, ${providers} provider pages, ${modules} reference modules`)
  if (process.argv.includes('--generate-only')) return
  const { build } = await import('vitepress')
  await build(docs)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
