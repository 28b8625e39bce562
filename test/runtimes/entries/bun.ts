// Bun: Bun.serve, PostgreSQL through pg.
import { runtimeHandler, type RuntimeEnv } from '../app.js'
import { postgresAdapter } from '../database.js'

declare const Bun: { serve(options: { port: number; hostname: string; fetch(request: Request): Promise<Response> }): { port: number } }
const env = process.env as unknown as RuntimeEnv & { DATABASE_URL: string }
const handle = runtimeHandler(() => postgresAdapter(env.DATABASE_URL))
const server = Bun.serve({ port: Number(process.env.PORT), hostname: '127.0.0.1', fetch: (request) => handle(request, env) })
console.log(`READY ${server.port}`)
