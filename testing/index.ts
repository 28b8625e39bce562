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
import { signInCompletionFlowFor } from '../core/flows/signin-completion.js'
import type { AuthConfig } from '../core/types.js'
import { SIGN_IN_COMPLETION } from '../machines/signin-completion.machine.js'
import {
  credentialsSignInMachine,
  oauthSignInMachine,
  sessionMachine,
  totpEnrolmentMachine,
} from '../machines/index.js'

/** An event sample: a type and whatever payload the machine reads. */
// Test-side events are deliberately loose: each driver reads the payload fields it arranged.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
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

/**
 * Shortest paths to every (state, context, incoming event) vertex, which covers every transition
 * whose event samples reach it.
 */
export function modelPaths<World>(driver: ModelDriver<World>): ModelPath[] {
  const label = (event: ModelEvent) =>
    driver.label?.(event) ??
    (typeof event.reason === 'string' ? `${event.type} (${event.reason})` : event.type)
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
 * The machine `Auth` runs for `flowId` under `config`: for the sign-in completion, the one with the
 * config's extensions inserted.
 *
 * @throws {ConfigError} when the config is invalid (an unsafe extension, for one).
 */
export function flowMachine(config: AuthConfig, flowId: string): AnyStateMachine {
  const resolved = assertConfig(config)
  if (flowId === SIGN_IN_COMPLETION) return signInCompletionFlowFor(resolved.extensions).machine
  const builtIn = [sessionMachine, credentialsSignInMachine, oauthSignInMachine, totpEnrolmentMachine].find(
    (machine) => machine.id === flowId,
  )
  if (!builtIn) throw new TypeError(`no flow "${flowId}"`)
  return builtIn
}
