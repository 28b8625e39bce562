/**
 * Properties checked on the charts themselves, for every machine in the registry: no way of signing
 * in reaches a session without passing the second-factor gate when the user has a factor enrolled.
 * Checked on the graph of states and transitions, so it holds for every path, present and future
 * (a new first-factor machine, an application's extension), not only for the paths a test drives.
 *
 * @module
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate'
import { SECOND_FACTOR_GATE, SIGN_IN_COMPLETION } from './signin-completion.machine.js'

/** The tags of states that issue sessions. */
const SESSION_ISSUING_TAGS = ['effect.issueSession', 'effect.createDatabaseSession']

interface Edge {
  from: string
  to: string
  event: string
}

function nodesOf(machine: AnyStateMachine): AnyStateNode[] {
  const all: AnyStateNode[] = []
  const walk = (node: AnyStateNode) => {
    all.push(node)
    for (const child of Object.values(node.states) as AnyStateNode[]) walk(child)
  }
  walk(machine.root)
  return all
}

function edgesOf(machine: AnyStateMachine): Edge[] {
  const edges: Edge[] = []
  for (const node of nodesOf(machine)) {
    for (const [event, candidates] of node.transitions) {
      for (const transition of candidates) {
        for (const target of transition.target ?? []) edges.push({ from: node.id, to: (target as AnyStateNode).id, event })
      }
    }
  }
  return edges
}

/** States reachable from `start`, not entering `avoid`, over `edges`. */
function reachable(start: string, edges: readonly Edge[], avoid: ReadonlySet<string>): Set<string> {
  const seen = new Set<string>([start])
  const queue = [start]
  while (queue.length > 0) {
    const from = queue.shift()!
    for (const edge of edges) {
      if (edge.from !== from || avoid.has(edge.to) || seen.has(edge.to)) continue
      seen.add(edge.to)
      queue.push(edge.to)
    }
  }
  return seen
}

/**
 * What is wrong with `machine` as far as the second-factor gate goes; empty when nothing is.
 *
 * - A first-factor machine may not issue a session itself: it has to hand over to the sign-in
 *   completion, where the gate is.
 * - In the sign-in completion, no path from the start reaches a state that issues a session without
 *   passing the gate, and from the gate's enrolled branch none does without a verified code.
 */
export function secondFactorGateViolations(machine: AnyStateMachine): string[] {
  const nodes = nodesOf(machine)
  const issuing = nodes.filter((node) => node.tags.some((tag: string) => SESSION_ISSUING_TAGS.includes(tag)))
  if (machine.id !== SIGN_IN_COMPLETION) {
    return issuing.map((node) => `${machine.id}: "${node.key}" issues a session without the sign-in completion`)
  }
  const violations: string[] = []
  const gate = nodes.find((node) => node.key === SECOND_FACTOR_GATE)
  if (!gate) return [`${machine.id}: has no second-factor gate ("${SECOND_FACTOR_GATE}")`]
  const edges = edgesOf(machine)
  const initial = machine.root.initial?.target[0]?.id ?? machine.root.id
  const issuingIds = new Set(issuing.map((node) => node.id))
  for (const id of reachable(initial, edges, new Set([gate.id]))) {
    if (issuingIds.has(id)) violations.push(`${machine.id}: a path reaches "${id.split('.').at(-1)}" without the second-factor gate`)
  }
  const decisions = gate.transitions.get('findSecondFactor.done') ?? []
  const enrolled = decisions[0]
  const enrolledTarget = (enrolled?.target?.[0] as AnyStateNode | undefined)?.id
  if (!enrolled || enrolled.guard !== 'isEnrolled' || enrolledTarget === undefined) {
    violations.push(`${machine.id}: the gate's first choice is not "isEnrolled": an enrolled user could pass without a code`)
    return violations
  }
  const withoutVerifiedCode = edges.filter((edge) => edge.event !== 'verifySecondFactor.done')
  for (const id of reachable(enrolledTarget, withoutVerifiedCode, new Set())) {
    if (issuingIds.has(id)) {
      violations.push(`${machine.id}: an enrolled user reaches "${id.split('.').at(-1)}" without a verified code`)
    }
  }
  return violations
}

/** The tag of a freshness gate: the state whose effect checks that the user's proof is recent. */
export const FRESHNESS_GATE_TAG = 'effect.checkFreshness'
/** The tag of a state whose effect changes what can sign in as the user, or who stays signed in. */
export const SENSITIVE_TAG = 'sensitive'

const initialOf = (machine: AnyStateMachine): string => machine.root.initial?.target[0]?.id ?? machine.root.id
const tagged = (nodes: readonly AnyStateNode[], tag: string) => nodes.filter((node) => node.tags.includes(tag))
const shortId = (id: string) => id.split('.').at(-1)

/**
 * What is wrong with `machine` as far as the freshness gate goes; empty when nothing is. Every state
 * tagged `sensitive` is out of reach from the start unless the path passes a freshness gate, and
 * leaves the gate only on its `checkFreshness.done` (a stale session's failure leads to no
 * sensitive state).
 */
export function freshnessGateViolations(machine: AnyStateMachine): string[] {
  const nodes = nodesOf(machine)
  const sensitive = new Set(tagged(nodes, SENSITIVE_TAG).map((node) => node.id))
  if (sensitive.size === 0) return []
  const gates = tagged(nodes, FRESHNESS_GATE_TAG)
  if (gates.length === 0) return [`${machine.id}: has sensitive states but no freshness gate`]
  const edges = edgesOf(machine)
  const violations: string[] = []
  for (const id of reachable(initialOf(machine), edges, new Set(gates.map((gate) => gate.id)))) {
    if (sensitive.has(id)) violations.push(`${machine.id}: a path reaches "${shortId(id)}" without the freshness gate`)
  }
  const gateIds = new Set(gates.map((gate) => gate.id))
  const notFresh = edges.filter((edge) => gateIds.has(edge.from) && edge.event !== 'checkFreshness.done')
  for (const edge of notFresh) {
    for (const id of reachable(edge.to, edges, gateIds)) {
      if (sensitive.has(id)) violations.push(`${machine.id}: a stale session reaches "${shortId(id)}" from the gate`)
    }
  }
  return violations
}

/**
 * What is wrong with the re-authentication chart (any machine with a `markVerified` state); empty
 * when nothing is: the session is marked verified only after a proof was accepted, on no other path.
 */
export function reauthenticationViolations(machine: AnyStateMachine): string[] {
  const marking = tagged(nodesOf(machine), 'effect.markVerified')
  const proof = /^verify[A-Z]\w*\.done$/
  const withoutProof = edgesOf(machine).filter((edge) => !proof.test(edge.event))
  const reached = reachable(initialOf(machine), withoutProof, new Set())
  return marking
    .filter((state) => reached.has(state.id))
    .map((state) => `${machine.id}: a path reaches "${state.key}" without a proven factor`)
}
