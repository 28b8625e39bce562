/**
 * The model-based test kit: the chart is the model, `Auth(request, config)` is the system under
 * test. It is what authchart's own model tests use, exported so that an application gets
 * transition coverage for the states it adds to a flow (a terms page, an extra check).
 *
 * `createTestModel(machine)` (xstate/graph) yields paths of events. A path is cut into requests:
 * each request event starts an HTTP request, and the effect results that follow it say what the
 * world must do during that request (the password is right, the callback refuses, …). The driver
 * arranges the world accordingly, sends the request through `Auth`, and the kit checks that the
 * engine took exactly the path's transitions (by id, from the config's `inspect` trace) and hands
 * the response to the driver's expectation for the state the path ends in. Coverage is counted on
 * what the engine really did.
 *
 * @example
 * ```ts
 * import { describe, it, expect } from 'vitest'
 * import { describeFlowModel, flowMachine } from 'authchart/testing'
 *
 * describeFlowModel('sign-in with our terms page', {
 *   machine: flowMachine(config, 'signin-completion'),
 *   samples: [...], world: () => ({...}), arrange: {...}, send: {...}, expect: {...},
 * }, { describe, it })
 * ```
 *
 * @module
 */
import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate'
import { createTestModel } from 'xstate/graph'
import { assertConfig } from '../core/config/resolve-config.js'
import type { FlowTrace } from '../core/engine/trace.js'
import { listTransitions, stateLabel, transitionId } from '../core/engine/transitions.js'
import type { AuthConfig } from '../core/types.js'
import { everyFlowLoaded } from '../core/flows/catalogue.js'
import { loadExtendedComposer } from '../core/flows/signin-completion/flow.js'

// The test kit reads charts synchronously, extended ones too: their composer is loaded with it.
await loadExtendedComposer(() => import('../core/flows/signin-completion/extended.js'))

/** An event sample: a type and whatever payload the machine reads. */
// Test-side events are deliberately loose: each driver reads the payload fields it arranged.
export type ModelEvent = { type: string; [key: string]: any }

/** What the kit needs to drive one machine through `Auth`. */
export interface ModelDriver<World> {
  machine: AnyStateMachine
  /** Event samples with payloads: every variant that can lead somewhere different. */
  samples: readonly ModelEvent[]
  /** A fresh world for each path. */
  world: () => World
  /** Effect result type → arrange the world so the effect yields it. */
  arrange: Record<string, (world: World, event: ModelEvent) => void | Promise<void>>
  /**
   * Request event type → send it through `Auth` and return the response. `inspect` must be set
   * as the config's `inspect` hook so the kit sees the engine's trace.
   */
  send: Record<
    string,
    (world: World, event: ModelEvent, inspect: (trace: FlowTrace) => void) => Promise<Response>
  >
  /** Final or resting state → what the response must be. */
  expect: Record<string, (response: Response, world: World) => void | Promise<void>>
  /**
   * Whether the world can produce `event` in `snapshot` (samples are global; some results only
   * follow certain earlier ones, e.g. no new user once the account was found linked).
   */
  possible?: (snapshot: AnyMachineSnapshot, event: ModelEvent) => boolean
  /**
   * Explore only the samples. When `possible` rules out every sample of an event type, xstate/graph
   * otherwise substitutes a bare `{ type }` event, so a whole type cannot be ruled out.
   */
  onlySamples?: boolean
  /** Words for an event sample in test names; defaults to its type (and failure reason). */
  label?: (event: ModelEvent) => string | undefined
  /**
   * Why a request ended where it did, in the words of the world as it was arranged (the password
   * was wrong, the stored row had expired), never in the chart's: with {@link ModelDriver.oracle},
   * a response is checked against the entry `<state> ← <cause>`, so a chart that takes a wrong
   * turn ends in a pair the oracle does not list. Defaults to the label of the request's last event.
   */
  cause?: (world: World, request: readonly ModelStep[]) => string
  /**
   * The expected response per `<state> ← <cause>`, written down by hand: status, `Location`,
   * cookies with every attribute (exact expiry included), the logged error types. A request that
   * ends in a pair without an entry fails. The `expect` check of the state runs as well.
   */
  oracle?: Record<string, ExpectedResponse | ((world: World) => ExpectedResponse)>
  /** The types of the errors logged (`logger.error`) during the request just sent, in order. */
  loggedErrors?: (world: World) => string[]
}

/** A `Set-Cookie` the oracle expects: its value (exact, or a pattern) and all of its attributes. */
export interface ExpectedCookie {
  /** The value, URI-decoded; `''` for a deletion. Omitted: any value. */
  value?: string | RegExp
  /** Every attribute, names lower-cased (`httponly: true`, `expires: 'Tue, 01 Jan 2030 …'`). */
  attributes: Record<string, string | true>
}

/** A response as an oracle entry describes it. */
export interface ExpectedResponse {
  status: number
  /** The `Location` header, exactly or by pattern; `null` when there must be none. Omitted: not checked. */
  location?: string | RegExp | null
  /** By cookie name: exactly this `Set-Cookie`, or `null` when it must not be set. Others are not checked. */
  cookies?: Record<string, ExpectedCookie | null>
  /** The error types logged during the request, in order (needs {@link ModelDriver.loggedErrors}). */
  errors?: readonly string[]
}

/** A step of a path: the event and the snapshots around it. */
export interface ModelStep {
  event: EventObject
  before: AnyMachineSnapshot
  after: AnyMachineSnapshot
}

/** A generated path, ready to drive. */
export interface ModelPath {
  description: string
  steps: ModelStep[]
}

/** A machine's transition coverage. */
export interface ModelCoverage {
  machine: string
  covered: number
  total: number
  /** Ids of the transitions no path took. */
  missing: string[]
}

function withoutTime(event: EventObject): string {
  const { at: _at, ...rest } = event as EventObject & { at?: number }
  return JSON.stringify(rest)
}

/** An assertion failure of the kit, with what was expected and what happened. */
export class ModelAssertionError extends Error {
  override name = 'ModelAssertionError'
  constructor(
    message: string,
    readonly expected: unknown,
    readonly actual: unknown,
  ) {
    super(`${message}\n  expected: ${JSON.stringify(expected)}\n  actual:   ${JSON.stringify(actual)}`)
  }
}

function assertEqual(actual: unknown, expected: unknown, message: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new ModelAssertionError(message, expected, actual)
}

/** The `Set-Cookie` headers of a response by name: URI-decoded value and lower-cased attributes. */
function setCookiesOf(response: Response): Map<string, { value: string; attributes: Record<string, string | true> }> {
  const cookies = new Map<string, { value: string; attributes: Record<string, string | true> }>()
  for (const header of response.headers.getSetCookie()) {
    const [pair = '', ...rest] = header.split(/;\s*/)
    const eq = pair.indexOf('=')
    const attributes: Record<string, string | true> = {}
    for (const attribute of rest) {
      const i = attribute.indexOf('=')
      if (i === -1) attributes[attribute.toLowerCase()] = true
      else attributes[attribute.slice(0, i).toLowerCase()] = attribute.slice(i + 1)
    }
    cookies.set(pair.slice(0, eq), { value: decodeURIComponent(pair.slice(eq + 1)), attributes })
  }
  return cookies
}

const sortedEntries = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)))

/**
 * Checks a response against an oracle entry.
 *
 * @throws {ModelAssertionError} at the first difference.
 */
function checkOracle(key: string, expected: ExpectedResponse, response: Response, errors: string[] | undefined): void {
  assertEqual(response.status, expected.status, `${key}: status`)
  const location = response.headers.get('location')
  if (expected.location instanceof RegExp) {
    if (location === null || !expected.location.test(location)) {
      throw new ModelAssertionError(`${key}: Location`, String(expected.location), location)
    }
  } else if (expected.location !== undefined) {
    assertEqual(location, expected.location, `${key}: Location`)
  }
  const cookies = setCookiesOf(response)
  for (const [name, cookie] of Object.entries(expected.cookies ?? {})) {
    const actual = cookies.get(name)
    if (cookie === null) {
      assertEqual(actual ?? null, null, `${key}: no ${name} cookie`)
      continue
    }
    if (!actual) throw new ModelAssertionError(`${key}: the ${name} cookie is set`, cookie, null)
    const { value } = cookie
    const valueMatches = value === undefined || (typeof value === 'string' ? actual.value === value : value.test(actual.value))
    if (!valueMatches) throw new ModelAssertionError(`${key}: the value of the ${name} cookie`, String(value), actual.value)
    assertEqual(sortedEntries(actual.attributes), sortedEntries(cookie.attributes), `${key}: the attributes of the ${name} cookie`)
  }
  if (expected.errors !== undefined) {
    if (errors === undefined) throw new Error(`${key}: the oracle expects logged errors but the driver has no loggedErrors`)
    assertEqual(errors, expected.errors, `${key}: the errors logged`)
  }
}

/** Whether `event` is one of the driver's samples (the very object, as the filter handed it out). */
const isSample = <World>(driver: ModelDriver<World>, event: EventObject) => driver.samples.includes(event as ModelEvent)

/**
 * The steps of a path whose events are not among the driver's samples. `createTestModel` adds a
 * bare `{ type }` for every event type a state accepts when the `events` filter left no sample of
 * it: such a path explores what the driver said cannot happen, with a payload nobody arranged.
 */
export function injectedEvents<World>(driver: ModelDriver<World>, path: ModelPath): EventObject[] {
  return path.steps.map((step) => step.event).filter((event) => !isSample(driver, event))
}

/** Words for an event in test names and oracle keys. */
function labelOf<World>(driver: ModelDriver<World>, event: ModelEvent): string {
  return driver.label?.(event) ?? (typeof event.reason === 'string' ? `${event.type} (${event.reason})` : event.type)
}

/**
 * Shortest paths to every (state, context, incoming event) vertex, which covers every transition
 * whose event samples reach it.
 */
export function modelPaths<World>(driver: ModelDriver<World>): ModelPath[] {
  const label = (event: ModelEvent) => labelOf(driver, event)
  const seen = new Map<string, number>()
  const describe = (steps: ModelStep[]) => {
    const final = stateLabel(steps.at(-1)!.after.value)
    const name = `${steps.map((s) => label(s.event)).join(' → ')} ⇒ ${final}`
    const count = (seen.get(name) ?? 0) + 1
    seen.set(name, count)
    return count === 1 ? name : `${name} (variant ${count})`
  }
  const { machine, samples } = driver
  const model = createTestModel(machine, {
    events: (snapshot: AnyMachineSnapshot) =>
      samples.filter((e) => snapshot.can(e) && (driver.possible?.(snapshot, e) ?? true)) as never,
    ...(driver.onlySamples
      ? { filterEvents: (_snapshot: AnyMachineSnapshot, event: EventObject) => samples.includes(event as ModelEvent) }
      : {}),
    serializeState: (snapshot, event) =>
      `${JSON.stringify(snapshot.value)}|${JSON.stringify(snapshot.context)}|${event ? withoutTime(event) : ''}`,
  })
  return model.getShortestPaths().map((path) => {
    // The first step of a path is the machine's initial state (event `xstate.init`).
    let before = path.steps[0]!.state as AnyMachineSnapshot
    const steps: ModelStep[] = path.steps.slice(1).map((step) => {
      const current = { event: step.event, before, after: step.state as AnyMachineSnapshot }
      before = current.after
      return current
    })
    return { description: describe(steps), steps }
  })
}

/** Cuts a path into requests: each request event with the effect results that follow it. */
function requestsOf<World>(driver: ModelDriver<World>, path: ModelPath): ModelStep[][] {
  const requests: ModelStep[][] = []
  for (const step of path.steps) {
    if (step.event.type in driver.send) requests.push([step])
    else {
      if (requests.length === 0) throw new Error(`the path starts with "${step.event.type}", which no request sends`)
      requests.at(-1)!.push(step)
    }
  }
  return requests
}

/**
 * Drives one path through `Auth`; returns the transition ids the engine took.
 *
 * @throws {ModelAssertionError} when the engine took other transitions than the path's.
 */
export async function drivePath<World>(driver: ModelDriver<World>, path: ModelPath): Promise<string[]> {
  const injected = injectedEvents(driver, path)
  if (injected.length > 0) {
    throw new ModelAssertionError(
      "the path holds events createTestModel injected, not the driver's samples (give the filter a sample of each type the state accepts)",
      'only sample events',
      injected,
    )
  }
  const world = driver.world()
  const taken: string[] = []
  for (const request of requestsOf(driver, path)) {
    const [start, ...effects] = request
    for (const step of effects) {
      const arrange = driver.arrange[step.event.type]
      if (!arrange) throw new Error(`no arrangement for ${step.event.type}`)
      await arrange(world, step.event)
    }
    const traces: FlowTrace[] = []
    const response = await driver.send[start!.event.type]!(world, start!.event, (trace) => traces.push(trace))
    const runs = traces.filter((t) => t.flow === driver.machine.id)
    assertEqual(runs.length, 1, `one run of ${driver.machine.id} per request`)
    const run = runs[0]!
    const expected = request.map((step) => ({
      event: step.event.type,
      to: stateLabel(step.after.value),
      transitions: driver.machine.getTransitionData(step.before as never, step.event as never).map(transitionId),
    }))
    const last = request.at(-1)!.after
    // A path may stop in an effect state when the rest of it is the same as a shorter path's: the
    // engine then goes on (as the world is arranged by default) and the response is checked for
    // the state it really came to rest in.
    const midway = last.status !== 'done' && !last.hasTag('awaitsRequest')
    const steps = run.steps.map(({ event, to, transitions }) => ({ event, to, transitions }))
    assertEqual(
      midway ? steps.slice(0, expected.length) : steps,
      expected,
      'the engine takes exactly the modelled transitions',
    )
    taken.push(...run.steps.flatMap((s) => s.transitions))
    const restedIn = midway ? (run.steps.at(-1)?.to ?? '') : stateLabel(last.value)
    const check = driver.expect[restedIn]
    if (!check) throw new Error(`no expectation for state ${restedIn}`)
    if (driver.oracle) {
      const cause = driver.cause?.(world, request) ?? labelOf(driver, request.at(-1)!.event as ModelEvent)
      const key = `${restedIn} ← ${cause}`
      const entry = driver.oracle[key]
      if (!entry) {
        throw new ModelAssertionError(`no oracle entry for "${key}": the request ended where its cause does not lead`, Object.keys(driver.oracle).filter((k) => k.startsWith(`${restedIn} ←`) || k.endsWith(`← ${cause}`)), key)
      }
      checkOracle(key, typeof entry === 'function' ? entry(world) : entry, response, driver.loggedErrors?.(world))
    }
    await check(response, world)
  }
  return taken
}

/** Transition coverage of a machine by a set of taken transition ids. */
export function coverage(machine: AnyStateMachine, taken: Iterable<string>): ModelCoverage {
  const all = listTransitions(machine)
  const covered = new Set([...taken].filter((id) => all.has(id)))
  const missing = [...all.keys()].filter((id) => !covered.has(id))
  return { machine: machine.id, covered: covered.size, total: all.size, missing }
}

/** The test functions of a runner (vitest, jest, node:test, mocha). */
export interface TestRunner {
  describe: (name: string, body: () => void) => unknown
  it: (name: string, body: () => Promise<void>) => unknown
}

/**
 * Declares the model-based tests of a flow: one test per generated path, driven through `Auth`,
 * then one that fails unless the paths took every transition of the machine.
 */
export function describeFlowModel<World>(
  title: string,
  driver: ModelDriver<World>,
  runner: TestRunner,
  options: { onCoverage?: (result: ModelCoverage) => void } = {},
): void {
  const paths = modelPaths(driver)
  const taken: string[] = []
  runner.describe(`${title}, driven through Auth over HTTP`, () => {
    runner.it(`explores only the driver's event samples`, async () => {
      const offending = paths.filter((path) => injectedEvents(driver, path).length > 0).map((path) => path.description)
      assertEqual(offending, [], `${offending.length} of ${paths.length} paths hold events createTestModel injected`)
    })
    for (const path of paths) {
      runner.it(path.description, async () => {
        taken.push(...(await drivePath(driver, path)))
      })
    }
    runner.it(`exercises every transition of the ${title}`, async () => {
      const result = coverage(driver.machine, taken)
      options.onCoverage?.(result)
      assertEqual(result.missing, [], `every transition of ${driver.machine.id} is taken`)
    })
  })
}

/**
 * The machine `Auth` runs for `flowId` under `config`, read from the config's flows (the built-in
 * ones and the application's own): for the sign-in completion, the one with the config's
 * extensions inserted.
 *
 * @throws {ConfigError} when the config is invalid (an unsafe extension, for one).
 */
export function flowMachine(config: AuthConfig, flowId: string): AnyStateMachine {
  const { flows, flowById } = assertConfig(config)
  const flow = flowById.get(flowId)
  if (!flow) throw new TypeError(`no flow "${flowId}": one of ${flows.map((known) => known.id).join(', ')}`)
  return flow.flow.machine
}

// Every built-in flow's code, loaded once: `flowMachine` reads any chart, configured or not.
await everyFlowLoaded()
