import { Auth } from 'authchart'
import { config } from './auth.js'

// Bun, Deno and Cloudflare Workers serve a module's default `{ fetch }`; Node does not (see server.ts).
export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url)
    if (url.pathname.startsWith('/auth/')) return Auth(request, config)
    const session = await Auth(new Request(new URL('/auth/session', url), { headers: request.headers }), config)
    return Response.json({ session: await session.json() })
  },
}
