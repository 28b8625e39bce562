// `node bench/profiles/accept-spread.mjs [library ...]`: where the max latency at 64 connections
// comes from. Each library's bench server (bench/http-server.js; `bare` is a plain Express route)
// gets JWT session reads from autocannon, 2 s per run (one at 16 connections, then four at 64, each
// with fresh connections, as `--http` runs them); per run it prints the slowest responses (latency
// @ ms after the run began), the time between the first and the last connection the server
// accepted, the longest wait of a first request after its accept, the longest time a request spent
// in the server, and both event loops' longest delay.
import { fork } from 'node:child_process'
import { createRequire } from 'node:module'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const autocannon = createRequire(import.meta.url)('autocannon')
const libraries = process.argv.length > 2 ? process.argv.slice(2) : ['authchart', '@auth/core', 'bare']
const clientLoop = monitorEventLoopDelay({ resolution: 5 })
clientLoop.enable()

for (const library of libraries) {
  const server = fork(new URL('../http-server.js', import.meta.url), [library], {
    execArgv: ['--import', new URL('./accept-hook.mjs', import.meta.url).href],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const ready = await new Promise((resolve) => server.once('message', resolve))
  const report = () =>
    new Promise((resolve) => {
      const listener = (message) => message?.type === 'accept' && (server.off('message', listener), resolve(message))
      server.on('message', listener)
      server.send({ type: 'accept' })
    })
  const request = { method: 'GET', path: ready.sessionPath.jwt, headers: { cookie: ready.cookies.jwt } }
  for (const connections of [16, 64, 64, 64, 64]) {
    await report()
    clientLoop.reset()
    const latencies = []
    const start = performance.now()
    const run = autocannon({ url: ready.origin, connections, pipelining: 1, duration: 2, requests: [request] })
    run.on('response', (_client, _status, _bytes, ms) => latencies.push([ms, performance.now() - start]))
    await run
    const server_ = await report()
    const slowest = latencies.sort((a, b) => b[0] - a[0]).slice(0, 3).map(([ms, at]) => `${ms.toFixed(0)}@${at.toFixed(0)}`)
    console.log(
      `${library.padEnd(11)} c=${String(connections).padEnd(2)} ${String(latencies.length).padStart(6)} responses; slowest ${slowest.join(' ')};`,
      `accepts spread over ${server_.acceptSpreadMs.toFixed(0)} ms (${server_.connections});`,
      `first request after accept ≤ ${server_.firstRequestWaitMs.toFixed(0)} ms; in the server ≤ ${server_.longestInServerMs.toFixed(0)} ms;`,
      `loop delay ≤ ${server_.loopDelayMaxMs.toFixed(0)} ms (server), ${(clientLoop.max / 1e6).toFixed(0)} ms (load generator)`,
    )
  }
  server.kill()
}
