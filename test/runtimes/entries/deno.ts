// Deno: Deno.serve, PostgreSQL through pg.
import { runtimeHandler, type RuntimeEnv } from '../app.js'
import { postgresAdapter } from '../database.js'

declare const Deno: {
  env: { toObject(): Record<string, string> }
  serve(options: { port: number; hostname: string; onListen(address: { port: number }): void }, handler: (request: Request) => Promise<Response>): unknown
}
const env = Deno.env.toObject() as unknown as RuntimeEnv & { DATABASE_URL: string; PORT: string }
const handle = runtimeHandler(() => postgresAdapter(env.DATABASE_URL))
Deno.serve({ port: Number(env.PORT), hostname: '127.0.0.1', onListen: ({ port }) => console.log(`READY ${port}`) }, (request) => handle(request, env))
