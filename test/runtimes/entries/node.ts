// Node: node:http in front of the fetch handler (memory adapter).
import { createServer } from 'node:http'
import { MemoryAdapter } from 'authchart/adapters/memory'
import { runtimeHandler, type RuntimeEnv } from '../app.js'

const env = process.env as unknown as RuntimeEnv
const handle = runtimeHandler(() => MemoryAdapter())
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one)
  }
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks)
  const response = await handle(new Request(new URL(req.url!, `http://${req.headers.host}`), { method: req.method, headers, body }), env)
  const out: [string, string][] = []
  response.headers.forEach((value, name) => name !== 'set-cookie' && out.push([name, value]))
  for (const cookie of response.headers.getSetCookie()) out.push(['set-cookie', cookie])
  res.writeHead(response.status, out)
  res.end(Buffer.from(await response.arrayBuffer()))
})
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`READY ${Number(process.env.PORT)}`))
