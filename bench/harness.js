// Interleaved measurement: each round runs every library for the same time budget, alternating
// which goes first, so drift (thermal, GC, JIT) hits both alike. Reported numbers are medians.
import { performance } from 'node:perf_hooks'

/** The median of `values`. */
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * Per library: medians of the rounds' rates and costs, the cheapest round's CPU cost, the peak RSS,
 * the total operations.
 */
export function summarize(samples) {
  return Object.fromEntries(
    Object.entries(samples).map(([name, runs]) => [
      name,
      {
        opsPerSec: median(runs.map((r) => r.opsPerSec)),
        usPerOp: median(runs.map((r) => r.usPerOp)),
        cpuUsPerOp: median(runs.map((r) => r.cpuUsPerOp)),
        // The best round: on a loaded machine noise only ever adds, so this is the steadier view.
        cpuUsPerOpMin: Math.min(...runs.map((r) => r.cpuUsPerOp)),
        rssMb: Math.max(...runs.map((r) => r.rssMb)),
        ops: runs.reduce((a, r) => a + r.ops, 0),
      },
    ]),
  )
}

async function runFor(op, budgetMs) {
  if (globalThis.gc) globalThis.gc()
  const cpu = process.cpuUsage()
  const start = performance.now()
  let ops = 0
  let elapsed = 0
  while ((elapsed = performance.now() - start) < budgetMs) {
    await op()
    ops++
  }
  const used = process.cpuUsage(cpu)
  return {
    ops,
    opsPerSec: (ops / elapsed) * 1000,
    usPerOp: (elapsed * 1000) / ops,
    cpuUsPerOp: (used.user + used.system) / ops,
    rssMb: process.memoryUsage().rss / 2 ** 20,
  }
}

/**
 * Measures `ops` (library name → async operation) in `rounds` interleaved rounds of `budgetMs`
 * each, after a warm-up. Returns per-library medians.
 */
export async function compare(ops, { rounds, budgetMs, warmupMs }) {
  const names = Object.keys(ops)
  for (const name of names) await runFor(ops[name], warmupMs)
  const samples = Object.fromEntries(names.map((n) => [n, []]))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse()
    for (const name of order) samples[name].push(await runFor(ops[name], budgetMs))
  }
  return summarize(samples)
}
