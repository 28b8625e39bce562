// The demo application: Fastify with credentials sign-in, a protected page and sign-out.
// It imports the package by name, exactly as an application would.
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import Fastify from 'fastify'
import { PostgresAdapter } from 'authchart/adapters/postgres'
import { fastifyAuth, getSession } from 'authchart/fastify'
import Credentials from 'authchart/providers/credentials'
import { createLocalOp } from './local-op.js'

/** The demo user, printed at start. */
export const DEMO_USER = {
  username: 'demo',
  password: 'authchart-demo',
  user: { id: 'demo-user', name: 'Demo User', email: 'demo@example.com' },
}

/**
 * The secret lives in the data folder so sessions survive restarts; it is created on first start.
 * Production apps set AUTH_SECRET instead.
 */
function demoSecret(dataDir) {
  if (process.env.AUTH_SECRET) return process.env.AUTH_SECRET
  mkdirSync(dataDir, { recursive: true })
  const file = join(dataDir, 'secret')
  if (!existsSync(file)) writeFileSync(file, randomBytes(33).toString('base64url'), { mode: 0o600 })
  return readFileSync(file, 'utf8').trim()
}

const escapeHtml = (text) =>
  String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const page = (title, body) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}
pre{background:#f4f4f5;padding:1rem;border-radius:.5rem;overflow:auto}a{color:#346df1}</style></head>
<body>${body}</body></html>`

/**
 * Builds the demo app, to be listened on at `host`:`port`. `dataDir` holds its secret and its
 * embedded PostgreSQL (PGlite) database, where users and sessions live, so sessions survive
 * restarts. The "Local OP" OpenID Provider is served by the same app at `/op`.
 */
export async function createDemoApp({ dataDir = '.demo-data', logger = false, port = 3000, host = 'localhost' } = {}) {
  mkdirSync(dataDir, { recursive: true })
  const origins = [...new Set([host, 'localhost', '127.0.0.1'])].map((h) => `http://${h}:${port}`)
  const localOp = createLocalOp({ issuer: `http://${host}:${port}/op`, origins })
  const db = new PGlite(join(dataDir, 'pglite'))
  const adapter = PostgresAdapter(db)
  await adapter.migrate()
  const authConfig = {
    secret: demoSecret(dataDir),
    trustHost: true,
    // With an adapter, sessions are database sessions (the cookie holds only a session token).
    adapter,
    // The live flow inspector at /auth/__flows (development NODE_ENV and loopback clients only).
    inspector: true,
    providers: [
      Credentials({
        name: 'Demo account',
        credentials: {
          username: { label: 'Username', autocomplete: 'username' },
          password: { label: 'Password', type: 'password', autocomplete: 'current-password' },
        },
        authorize: ({ username, password }) =>
          username === DEMO_USER.username && password === DEMO_USER.password
            ? { ...DEMO_USER.user }
            : null,
      }),
      {
        id: 'local-op',
        name: 'Local OP',
        type: 'oidc',
        issuer: localOp.issuer,
        clientId: localOp.client.clientId,
        clientSecret: localOp.client.clientSecret,
        checks: ['pkce', 'state', 'nonce'],
      },
    ],
  }

  const app = Fastify({ logger })
  app.addHook('onClose', async () => db.close())
  // The Local OP reads its own request bodies, so it is served before Fastify parses them.
  app.addHook('onRequest', async (request, reply) => {
    const url = request.raw.url ?? ''
    if (url !== '/op' && !url.startsWith('/op/') && !url.startsWith('/op?')) return
    reply.hijack()
    await localOp.handle(request.raw, reply.raw)
    return reply
  })
  await app.register(fastifyAuth, authConfig)

  app.get('/', async (request, reply) => {
    const session = await getSession(request, authConfig)
    const who = session?.user
      ? `Signed in as <strong>${escapeHtml(session.user.name ?? session.user.email)}</strong>.`
      : 'You are not signed in.'
    return reply.type('text/html').send(
      page(
        'authchart demo',
        `<h1>authchart demo</h1><p>${who}</p><ul>
<li><a href="/auth/signin?callbackUrl=/protected">Sign in</a>: with the demo account (user <code>${DEMO_USER.username}</code>, password <code>${DEMO_USER.password}</code>) or with <strong>Local OP</strong>, an OpenID Provider running inside this app</li>
<li><a href="/protected">Protected page</a></li>
<li><a href="/auth/signout">Sign out</a></li>
<li><a href="/auth/providers">Providers (JSON)</a> · <a href="/auth/session">Session (JSON)</a></li>
<li><a href="/auth/__flows">Flow inspector</a>: the charts every request runs through, with recent traces (development only)</li></ul>`,
      ),
    )
  })

  app.get('/protected', async (request, reply) => {
    const session = await getSession(request, authConfig)
    if (!session?.user) {
      return reply.redirect(`/auth/signin?callbackUrl=${encodeURIComponent('/protected')}`, 302)
    }
    return reply.type('text/html').send(
      page(
        'Protected',
        `<h1>Protected page</h1><p>Only signed-in users see this. Your session:</p>
<pre id="session">${escapeHtml(JSON.stringify(session, null, 2))}</pre>
<p><a href="/auth/signout">Sign out</a> · <a href="/">Home</a></p>`,
      ),
    )
  })

  return app
}
