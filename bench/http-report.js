// The report of `npm run bench -- --http` (bench/http-load.js): one table per scenario, the RSS of
// each server at the end, the machine's load before and after; JSON in bench/results/http-latest.json.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { CONCURRENCY, httpLoad, LIBRARIES, SCENARIOS } from './http-load.js'

const fmt = (n, digits = 0) => (n === undefined ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }))

function uptime() {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim()
  } catch {
    return `load average ${loadavg().map((l) => l.toFixed(2)).join(', ')}`
  }
}

function renderTable(table) {
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)))
  const line = (row) => `| ${row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`
  return [line(table[0]), `|${widths.map((w, i) => (i < 2 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...table.slice(1).map(line)].join('\n')
}

/** Runs the load test and prints (or, with `json`, writes out) its report. */
export async function httpLoadReport({ quick = false, json = false } = {}) {
  const timing = quick ? { rounds: 1, seconds: 1, warmupSeconds: 1 } : { rounds: 3, seconds: 2, warmupSeconds: 1 }
  const before = uptime()
  const started = Date.now()
  const { rows, rssMb } = await httpLoad({ ...timing, log: (line) => process.stderr.write(`${line}\n`) })
  const after = uptime()
  const environment = `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${quick ? 'quick' : 'full'} run (${timing.rounds} round(s) of ${timing.seconds} s per cell), ${Math.round((Date.now() - started) / 1000)} s`
  const report = { date: new Date().toISOString(), environment, uptimeBefore: before, uptimeAfter: after, timing, rows, rssMb }
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true })
  writeFileSync(new URL('./results/http-latest.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
  if (json) {
    console.log(JSON.stringify(report, null, 2))
    return report
  }
  console.log(`\nHTTP latency under load — ${environment}`)
  console.log(`before: ${before}\nafter:  ${after}`)
  console.log(
    'Each library behind Express in its own process (authchart/express, @auth/express, better-auth toNodeHandler), memory adapters;' +
      '\nautocannon in this process, keep-alive, no pipelining; c = concurrent connections. ops/s: sign-ins (or reads) per second, medians of rounds;' +
      '\np50/p99/max: per request, over every response of all rounds; CPU: the server process\'s µs per request. better-auth: JWT = its jwe cookie cache,' +
      '\ncache = its compact cookie cache, sign-in = one POST (no CSRF request; cheap password hash for every library).',
  )
  for (const scenario of SCENARIOS) {
    const table = [['c', 'library', 'ops/s', 'authchart ÷ this', 'p50 ms', 'p99 ms', 'max ms', 'CPU µs/req']]
    for (const connections of CONCURRENCY) {
      const ours = rows.find((r) => r.scenario === scenario.name && r.connections === connections && r.library === LIBRARIES[0])
      for (const library of LIBRARIES) {
        const row = rows.find((r) => r.scenario === scenario.name && r.connections === connections && r.library === library)
        if (!row) continue
        table.push([
          String(connections),
          library,
          fmt(row.opsPerSec),
          library === LIBRARIES[0] || !ours ? '' : `${fmt(ours.opsPerSec / row.opsPerSec, 2)}×`,
          fmt(row.p50Ms, 2),
          fmt(row.p99Ms, 2),
          fmt(row.maxMs, 1),
          fmt(row.cpuUsPerRequest, 0),
        ])
      }
    }
    console.log(`\n${scenario.title}\n${renderTable(table)}`)
  }
  console.log(`\nRSS at the end (MB): ${LIBRARIES.map((library) => `${library} ${fmt(rssMb[library])}`).join(', ')}`)
  console.log('JSON: bench/results/http-latest.json')
  return report
}
