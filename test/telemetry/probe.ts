// Run in a child process by the "nothing loaded" test: a credentials sign-in and a session read
// through `Auth`, with telemetry as argv[2] says ("off" or "on"); prints the statuses.
import { register } from 'node:module'

register('./probe-hooks.mjs', import.meta.url)
const { Auth } = await import('../../core/index.js')
const { default: Credentials } = await import('../../providers/credentials.js')
// Imported only when on, as an application brings telemetry in.
const telemetry = process.argv[2] === 'on' ? (await import('../../core/telemetry.js')).openTelemetry() : undefined

const ORIGIN = 'http://localhost:3000'
const config = {
  secret: 'a probe secret of at least thirty-two characters',
  trustHost: true,
  providers: [Credentials({ credentials: { password: {} }, authorize: (c: Record<string, unknown>) => (c.password === 'pw' ? { id: 'u-1' } : null) })],
  ...(telemetry ? { telemetry } : {}),
}
const csrf = await Auth(new Request(`${ORIGIN}/auth/csrf`), config)
const { csrfToken } = (await csrf.json()) as { csrfToken: string }
const cookie = csrf.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
const signIn = await Auth(
  new Request(`${ORIGIN}/auth/callback/credentials`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ csrfToken, password: 'pw' }),
  }),
  config,
)
const session = signIn.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
const read = await Auth(new Request(`${ORIGIN}/auth/session`, { headers: { cookie: session } }), config)
console.log(JSON.stringify({ signIn: signIn.status, session: read.status, user: ((await read.json()) as { user?: { id?: string } }).user }))
