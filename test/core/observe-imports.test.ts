/**
 * The audit trail, OpenTelemetry and the flow inspector are brought in by an import: the shapes
 * their options had before are refused at load with the line to write; a configuration without
 * them runs no hook code on a request and bundles none of their modules.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, type Metafile } from 'esbuild'
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { auditTrail } from '../../core/audit.js'
import type { AuditEvent } from '../../core/audit/types.js'
import { assertConfig, resolveConfig } from '../../core/config/resolve-config.js'
import { ConfigError } from '../../core/errors.js'
import { flowInspector } from '../../core/inspector.js'
import * as notify from '../../core/observe/notify.js'
import { openTelemetry } from '../../core/telemetry.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, testConfig } from '../fixtures/http.js'
import { fromSources } from '../runtimes/launch.mjs'

// Every function through which the core reaches an observer, spied on (each still runs).
vi.mock('../../core/observe/notify.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../core/observe/notify.js')>()
  return Object.fromEntries(Object.entries(actual).map(([name, value]) => [name, typeof value === 'function' ? vi.fn(value) : value]))
})

const HOOK_SECRET = 'a webhook secret that must never be printed'

/** The error a config is refused with at load. */
function refusal(overrides: Record<string, unknown>): ConfigError {
  const resolution = resolveConfig(testConfig(overrides as Partial<AuthConfig>))
  if (resolution.ok) throw new Error('the config was accepted')
  expect(resolution.error).toBeInstanceOf(ConfigError)
  return resolution.error as ConfigError
}

describe('an option in the shape it had before the import', () => {
  it('refuses a plain audit object with the import and the call to write, quoting option names only', () => {
    const plain = refusal({ audit: { sink: () => {} } })
    expect(plain.message).toBe(
      "config.audit: a plain object is no longer accepted; write `import { auditTrail } from 'authchart/audit'` and `audit: auditTrail({ sink })`",
    )
    expect(plain.path).toEqual(['audit'])
    const webhook = refusal({ audit: { webhook: { url: 'https://hooks.example/a', secret: HOOK_SECRET } } })
    expect(webhook.message).toContain('`audit: auditTrail({ webhook })`')
    expect(webhook.message).not.toContain(HOOK_SECRET)
    expect(webhook.message).not.toContain('hooks.example')
  })

  it('refuses `telemetry: true` and a plain telemetry object', () => {
    expect(refusal({ telemetry: true }).message).toBe(
      "config.telemetry: `true` is no longer accepted; write `import { openTelemetry } from 'authchart/telemetry'` and `telemetry: openTelemetry()`",
    )
    expect(refusal({ telemetry: { tracer: { startSpan: () => ({}) }, meter: undefined } }).message).toContain(
      '`telemetry: openTelemetry({ tracer, meter })`',
    )
  })

  it('refuses `inspector: true`, an inspector object, and `inspector: false` (which is the default: omit it)', () => {
    expect(refusal({ inspector: true }).message).toBe(
      "config.inspector: `true` is no longer accepted; write `import { flowInspector } from 'authchart/inspector'` and `inspector: flowInspector()`",
    )
    expect(refusal({ inspector: { traces: 100 } }).message).toContain('`inspector: flowInspector({ traces })`')
    expect(refusal({ inspector: false }).message).toBe(
      "config.inspector: `inspector: false` is the default now: omit the option (to turn it on: `import { flowInspector } from 'authchart/inspector'` and `inspector: flowInspector()`)",
    )
  })

  it("refuses a module's value in another module's option", () => {
    expect(refusal({ telemetry: auditTrail({ sink: () => {} }) }).message).toMatch(/^config\.telemetry: .*`telemetry: openTelemetry\(\)`$/)
    expect(refusal({ audit: flowInspector() }).message).toMatch(/^config\.audit: .*auditTrail/)
  })

  it('answers every request of such a config as a configuration failure, and logs the line to write', async () => {
    const config = testConfig({ inspector: true } as never)
    const response = await new Client(config).send({ path: '/session' })
    expect(response.status).toBe(500)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining('flowInspector()') }))
  })
})

describe('the types of the options', () => {
  it('accept only the values of the modules (the shapes before are type errors)', () => {
    const accepted: Pick<AuthConfig, 'audit' | 'telemetry' | 'inspector'>[] = [
      { audit: auditTrail({ sink: () => {} }), telemetry: openTelemetry(), inspector: flowInspector({ clients: 'any' }) },
      {},
    ]
    const refused: Pick<AuthConfig, 'audit' | 'telemetry' | 'inspector'>[] = [
      // @ts-expect-error a plain audit object
      { audit: { sink: () => {} } },
      // @ts-expect-error `telemetry: true`
      { telemetry: true },
      // @ts-expect-error `inspector: true`
      { inspector: true },
      // @ts-expect-error `inspector: false`
      { inspector: false },
      // @ts-expect-error a module's value in another option
      { audit: openTelemetry() },
    ]
    expect(accepted.every((config) => resolveConfig(testConfig(config)).ok)).toBe(true)
    expect(refused.some((config) => resolveConfig(testConfig(config)).ok)).toBe(false)
  })

  it('keep the audit constants in authchart/audit only', async () => {
    const core = await import('../../core/index.js')
    const audit = await import('../../core/audit.js')
    expect(core).not.toHaveProperty('AUDIT_SCHEMA_VERSION')
    expect(core).not.toHaveProperty('LIFECYCLE_KINDS')
    expect(audit.AUDIT_SCHEMA_VERSION).toBe(2)
    expect(audit.LIFECYCLE_KINDS).toContain('sign-out')
  })
})

describe("a module's own options", () => {
  it("are checked at load, with the option's path in the message", () => {
    expect(refusal({ audit: auditTrail({ webhook: { url: 'file:///etc/passwd', secret: HOOK_SECRET } }) }).message).toMatch(
      /^config\.audit\.webhook\.url: /,
    )
    expect(refusal({ audit: auditTrail({ clientAddress: 'all' as never }) }).path).toEqual(['audit', 'clientAddress'])
    expect(refusal({ inspector: flowInspector({ traces: 0 }) }).message).toMatch(/^config\.inspector\.traces: /)
    expect(refusal({ telemetry: openTelemetry({ tracer: {} as never }) }).message).toMatch(/^config\.telemetry\.tracer/)
  })
})

describe('the observers of a configuration', () => {
  it('are none for a config without audit, telemetry, inspector or inspect: one shared empty list', () => {
    const a = assertConfig(testConfig())
    const b = assertConfig(testConfig())
    expect(a.observers).toHaveLength(0)
    expect(a.observers).toBe(b.observers)
    expect(Object.isFrozen(a.observers)).toBe(true)
  })

  it('are the ones configured, in the order audit, telemetry, inspector, inspect', () => {
    const config = testConfig({
      inspector: flowInspector(),
      telemetry: openTelemetry({ tracer: { startSpan: () => ({}) as never } }),
      audit: auditTrail({ sink: () => {} }),
      inspect: () => {},
    })
    expect(assertConfig(config).observers.map((observer) => observer.kind)).toEqual(['audit', 'telemetry', 'inspector', 'inspect'])
  })
})

describe('a request of a configuration without observers', () => {
  const spied = Object.entries(notify).filter(([, value]) => vi.isMockFunction(value))
  beforeEach(() => vi.clearAllMocks())

  async function signInReadAndSignOut(config: AuthConfig) {
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    await client.signIn({ username: 'alice', password: 'wrong' })
    expect((await client.session()).body).toMatchObject({ user: { email: 'alice@example.com' } })
    await client.send({ path: '/signout', body: { csrfToken: await client.csrfToken() } })
  }

  it('runs no observer code: a sign-in, a refusal, a session read and a sign-out reach no hook', async () => {
    expect(spied.map(([name]) => name)).toEqual(expect.arrayContaining(['observedRunOptions', 'notifyRun', 'notifyEmitted', 'startObserved', 'finishObserved', 'endObserved']))
    await signInReadAndSignOut(testConfig())
    expect(spied.filter(([, spy]) => vi.mocked(spy).mock.calls.length > 0).map(([name]) => name)).toEqual([])
  })

  it('reaches them once one is configured (the check can fail)', async () => {
    const events: AuditEvent[] = []
    await signInReadAndSignOut(testConfig({ audit: auditTrail({ sink: (event) => void events.push(event) }) }))
    for (const name of ['observedRunOptions', 'notifyRun', 'notifyEmitted', 'startObserved', 'finishObserved', 'endObserved'] as const) {
      expect(vi.mocked(notify[name]), name).toHaveBeenCalled()
    }
    expect(events.map((event) => event.kind)).toEqual(expect.arrayContaining(['flow', 'sign-out']))
  })
})

const work = mkdtempSync(join(tmpdir(), 'authchart-observe-bundle-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** Every input of a credentials app's edge bundle (all chunks), with `lines` added to its config. */
async function bundledInputs(name: string, imports: string[], options: string) {
  const contents = [
    "import { Auth } from 'authchart'",
    "import Credentials from 'authchart/providers/credentials'",
    ...imports,
    `const config = { secret: 'a bundle test secret of at least 32 characters', trustHost: true, providers: [Credentials({ authorize: () => null })]${options} }`,
    'export default { fetch: (request) => Auth(request, config) }',
  ].join('\n')
  const { metafile } = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'js', sourcefile: 'app.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    outdir: join(work, name),
    metafile: true,
    logLevel: 'silent',
    plugins: [fromSources],
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    external: ['node:*'],
  })
  return Object.values((metafile as Metafile).outputs).flatMap((output) =>
    Object.entries(output.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([path]) => path),
  )
}

const OBSERVER_MODULES = /(^|\/)core\/(audit|telemetry|inspector)\//

describe('a credentials-only bundle', () => {
  it('carries none of core/audit/, core/telemetry/, core/inspector/', async () => {
    const inputs = await bundledInputs('plain', [], '')
    expect(inputs.some((path) => path.endsWith('core/auth.ts'))).toBe(true)
    expect(inputs.filter((path) => OBSERVER_MODULES.test(path))).toEqual([])
  })

  it('carries the audit trail once the app imports it (the check can fail)', async () => {
    const inputs = await bundledInputs('audited', ["import { auditTrail } from 'authchart/audit'"], ', audit: auditTrail({ sink: () => {} })')
    expect(inputs.filter((path) => OBSERVER_MODULES.test(path))).toEqual(expect.arrayContaining([expect.stringMatching(/core\/audit\/record\.ts$/)]))
  })
})
