// Loaded into a bench server with `--import` by accept-spread.mjs: records, per timed run, when each
// new connection was accepted, how long its first request waited after the accept, the longest time
// a request spent in the server, and the event loop's longest delay; answers `{ type: 'accept' }`.
import http from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const loopDelay = monitorEventLoopDelay({ resolution: 5 })
loopDelay.enable()
let accepted = []
let firstRequestWait = 0
let longestInServer = 0
const emit = http.Server.prototype.emit
http.Server.prototype.emit = function (event, socketOrRequest, response) {
  if (event === 'connection') {
    socketOrRequest.acceptedAt = performance.now()
    accepted.push(socketOrRequest.acceptedAt)
  } else if (event === 'request') {
    const arrived = performance.now()
    const socket = socketOrRequest.socket
    if (socket.acceptedAt !== undefined) {
      firstRequestWait = Math.max(firstRequestWait, arrived - socket.acceptedAt)
      socket.acceptedAt = undefined
    }
    response.once('finish', () => (longestInServer = Math.max(longestInServer, performance.now() - arrived)))
  }
  return emit.apply(this, arguments)
}
process.on('message', (message) => {
  if (message?.type !== 'accept') return
  process.send({
    type: 'accept',
    connections: accepted.length,
    acceptSpreadMs: accepted.length > 0 ? accepted.at(-1) - accepted[0] : 0,
    firstRequestWaitMs: firstRequestWait,
    longestInServerMs: longestInServer,
    loopDelayMaxMs: loopDelay.max / 1e6,
  })
  loopDelay.reset()
  accepted = []
  firstRequestWait = 0
  longestInServer = 0
})
