// The A/B table: a previous build (A, the baseline) next to this checkout's (B), case by case,
// each metric with the ratio B/A.

/** One row: a case, a metric, A's and B's values and B ÷ A. */
const row = (name, metric, a, b, lowerIsBetter) => ({ case: name, metric, a, b, ratio: b / a, lowerIsBetter })

/**
 * The A/B rows of a run. `scenarios` are the measured cases, in-process and over HTTP alike
 * (`{ name, measured: { [library]: { cpuUsPerOp, cpuUsPerOpMin, opsPerSec } } }`), `coldStart` the
 * cold-start case's result (`bench/cold-start.js`), `a` and `b` the two builds' names in them. A
 * case that measured only one of the two is left out. For CPU, milliseconds, files and bytes a
 * ratio below 1 means B costs less; for ops/s a ratio above 1 means B is faster.
 */
export function abRows({ scenarios = [], coldStart }, { a, b }) {
  const rows = []
  for (const scenario of scenarios) {
    const before = scenario.measured[a]
    const after = scenario.measured[b]
    if (!before || !after) continue
    rows.push(row(scenario.name, 'CPU µs/op', before.cpuUsPerOp, after.cpuUsPerOp, true))
    // On a loaded machine noise only ever adds: each build's cheapest round is the steadier view.
    if (before.cpuUsPerOpMin !== undefined && after.cpuUsPerOpMin !== undefined) {
      rows.push(row(scenario.name, 'CPU µs/op, best round', before.cpuUsPerOpMin, after.cpuUsPerOpMin, true))
    }
    rows.push(row(scenario.name, 'ops/s', before.opsPerSec, after.opsPerSec, false))
  }
  const shapes = [...new Set((coldStart?.handlers ?? []).map((h) => h.shape))]
  for (const shape of shapes) {
    const of = (build) => coldStart.handlers.find((h) => h.build === build && h.shape === shape)
    const before = of(a)
    const after = of(b)
    if (!before || !after) continue
    const name = `cold-start (${shape})`
    rows.push(row(name, 'wall ms above bare', before.aboveBare.coldMs, after.aboveBare.coldMs, true))
    rows.push(row(name, 'CPU ms above bare', before.aboveBare.cpuMs, after.aboveBare.cpuMs, true))
    if (before.cheapestAboveBare && after.cheapestAboveBare) {
      rows.push(row(name, 'CPU ms above bare, cheapest process', before.cheapestAboveBare.cpuMs, after.cheapestAboveBare.cpuMs, true))
    }
    if (before.loaded && after.loaded) {
      rows.push(row(name, 'files loaded', before.loaded.files, after.loaded.files, true))
      rows.push(row(name, 'KiB loaded', before.loaded.bytes / 1024, after.loaded.bytes / 1024, true))
    }
  }
  return rows
}
