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
  guard: string | undefined
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
        const guard = typeof transition.guard === 'string' ? transition.guard : transition.guard ? '(inline)' : undefined
        for (const target of transition.target ?? []) edges.push({ from: node.id, to: (target as AnyStateNode).id, event, guard })
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
