// One fresh process of the cold-start and session-read measurement, on Node, Bun or Deno:
// `<runtime> bench/edge-probe.mjs <bundle> <cookie> <reads>`. Imports the bundled handler, answers
// a first session read (import + first request, in ms), then times `reads` session reads (µs each),
// and prints one JSON line.
const args = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2)
const [bundle, cookie, reads = '0'] = args
const request = () => new Request('http://localhost/auth/session', { headers: { cookie } })

const started = performance.now()
const { default: app } = await import(new URL(bundle, `file://${globalThis.Deno ? globalThis.Deno.cwd() : process.cwd()}/`).href)
const first = await app.fetch(request())
const body = await first.text()
const coldMs = performance.now() - started

const count = Number(reads)
for (let i = 0; i < Math.min(count, 200); i++) await (await app.fetch(request())).text() // warm-up
const readStarted = performance.now()
for (let i = 0; i < count; i++) await (await app.fetch(request())).text()
const readUs = count > 0 ? ((performance.now() - readStarted) * 1000) / count : undefined
console.log(JSON.stringify({ coldMs, readUs, status: first.status, body }))
