/**
 * Model-based testing: the machine is the model, `Auth(request, config)` is the system under test.
 *
 * `createTestModel(machine).getShortestPaths()` yields paths of events. A path is cut into requests:
 * each request event starts an HTTP request, and the effect results that follow it say what the
 * world must do during that request (authorize accepts, the jwt callback returns null, …). The
 * driver arranges the world accordingly, sends the request through `Auth`, and the harness checks
 * that the engine took exactly the path's transitions (by id, from the `inspect` trace) and that the
 * response is the one the final state implies. Transition coverage is measured on the real runs.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventObject,
} from 'xstate'
import { createTestModel } from 'xstate/graph'
import type { FlowTrace } from '../../core/engine/trace.js'
import { listTransitions, stateLabel, transitionId } from '../../core/engine/transitions.js'
import { EFFECT_TAG_PREFIX } from '../../machines/shared/events.js'

/** Where model tests leave their coverage for the end-of-run summary. */
export const COVERAGE_DIR = join(process.cwd(), 'node_modules', '.cache', 'authchart-model-coverage')

/** An event sample: a type and whatever payload the machine reads. */
// Test-side events are deliberately loose: each driver reads the payload fields it arranged.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ModelEvent = { type: string; [key: string]: any }

/** What the harness needs to drive one machine through HTTP. */
export interface ModelDriver<World> {
  machine: AnyStateMachine
  /** Event samples with payloads: every variant that can lead somewhere different. */
  samples: readonly ModelEvent[]
  /** A fresh world for each path. */
  world: () => World
  /** Effect result type → arrange the world so the effect yields it. */
  arrange: Record<string, (world: World, event: ModelEvent) => void>
  /**
   * Request event type → send it through `Auth` and return the response. `inspect` must be set
   * as the config's `inspect` hook so the harness sees the engine's trace.
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
interface ModelStep {
  event: EventObject
  before: AnyMachineSnapshot
  after: AnyMachineSnapshot
}

/** A generated path, ready to drive. */
export interface ModelPath {
  description: string
  steps: ModelStep[]
}

function withoutTime(event: EventObject): string {
  const { at: _at, ...rest } = event as EventObject & { at?: number }
  return JSON.stringify(rest)
}

/**
 * Shortest paths to every (state, context, incoming event) vertex, which covers every transition
 * whose event samples reach it; prefixes of longer paths are dropped.
 */
export function modelPaths(driver: ModelDriver<unknown>): ModelPath[] {
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
  // A path can end in an effect state when its vertex's continuations were reached more briefly
  // from another vertex with the same context; the engine never stops there, so it is not driven
  // (its transitions are taken by the longer paths).
  const inEffect = (snapshot: AnyMachineSnapshot) =>
    [...snapshot.tags].some((tag) => tag.startsWith(EFFECT_TAG_PREFIX))
  const paths = model.getShortestPaths().map((path) => {
    // The first step of a path is the machine's initial state (event `xstate.init`).
    let before = path.steps[0]!.state as AnyMachineSnapshot
    const steps: ModelStep[] = path.steps.slice(1).map((step) => {
      const current = { event: step.event, before, after: step.state as AnyMachineSnapshot }
      before = current.after
      return current
    })
    return { steps }
  })
  return paths
    .filter(({ steps }) => steps.length > 0 && !inEffect(steps.at(-1)!.after))
    .map(({ steps }) => ({ description: describe(steps), steps }))
}

/** Cuts a path into requests: each request event with the effect results that follow it. */
function requestsOf(driver: ModelDriver<unknown>, path: ModelPath): ModelStep[][] {
  const requests: ModelStep[][] = []
  for (const step of path.steps) {
    if (step.event.type in driver.send) requests.push([step])
    else requests.at(-1)!.push(step)
  }
  return requests
}

/** Drives one path through `Auth`; returns the transition ids the engine took. */
export async function drivePath<World>(driver: ModelDriver<World>, path: ModelPath): Promise<string[]> {
  const world = driver.world()
  const taken: string[] = []
  for (const request of requestsOf(driver as ModelDriver<unknown>, path)) {
    const [start, ...effects] = request
    for (const step of effects) {
      const arrange = driver.arrange[step.event.type]
      if (!arrange) throw new Error(`no arrangement for ${step.event.type}`)
      arrange(world, step.event)
    }
    const traces: FlowTrace[] = []
    const response = await driver.send[start!.event.type]!(world, start!.event, (trace) =>
      traces.push(trace),
    )
    const runs = traces.filter((t) => t.flow === driver.machine.id)
    expect(runs, 'one run of the flow per request').toHaveLength(1)
    const run = runs[0]!
    const expected = request.map((step) => ({
      event: step.event.type,
      to: stateLabel(step.after.value),
      transitions: driver.machine
        .getTransitionData(step.before as never, step.event as never)
        .map(transitionId),
    }))
    expect(
      run.steps.map(({ event, to, transitions }) => ({ event, to, transitions })),
      'the engine takes exactly the modelled transitions',
    ).toEqual(expected)
    taken.push(...run.steps.flatMap((s) => s.transitions))
    const last = request.at(-1)!.after
    const check = driver.expect[stateLabel(last.value)]
    if (!check) throw new Error(`no expectation for state ${stateLabel(last.value)}`)
    await check(response, world)
  }
  return taken
}

/** Transition coverage of a machine by a set of taken transition ids. */
export function coverage(machine: AnyStateMachine, taken: Iterable<string>) {
  const all = listTransitions(machine)
  const covered = new Set([...taken].filter((id) => all.has(id)))
  const missing = [...all.keys()].filter((id) => !covered.has(id))
  return { machine: machine.id, covered: covered.size, total: all.size, missing }
}

/** Records a machine's coverage for the end-of-run summary. */
export function reportCoverage(result: ReturnType<typeof coverage>): void {
  mkdirSync(COVERAGE_DIR, { recursive: true })
  writeFileSync(join(COVERAGE_DIR, `${result.machine}.json`), JSON.stringify(result))
}

/**
 * Declares the model-based tests of a machine: one test per generated path, then one asserting
 * that the paths, driven through `Auth`, took every transition of the machine.
 */
export function describeModel<World>(title: string, driver: ModelDriver<World>): void {
  const paths = modelPaths(driver as ModelDriver<unknown>)
  const taken: string[] = []
  describe(`${title}, driven through Auth over HTTP`, () => {
    it.each(paths.map((path) => [path.description, path] as const))('%s', async (_name, path) => {
      taken.push(...(await drivePath(driver, path)))
    })

    it(`exercises every transition of the ${title}`, () => {
      const result = coverage(driver.machine, taken)
      reportCoverage(result)
      expect(result.missing).toEqual([])
      expect(result.covered).toBe(result.total)
    })
  })
}
