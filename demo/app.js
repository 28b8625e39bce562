// The demo application: Fastify with credentials, passwords (sign-up, confirmation, reset), OpenID
// Connect, e-mail (magic links and one-time codes) and passkey sign-in, a protected page and sign-out. It imports the package by name,
// exactly as an application would.
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import Fastify from 'fastify'
import { PostgresAdapter } from 'authchart/adapters/postgres'
import { fastifyAuth, getSession } from 'authchart/fastify'
import { flowInspector } from 'authchart/inspector'
import Credentials from 'authchart/providers/credentials'
import Nodemailer from 'authchart/providers/nodemailer'
import { termsExtension } from 'authchart/extensions/terms'
import Passkey from 'authchart/providers/passkey'
import Password from 'authchart/providers/password'
import { totp } from 'authchart/second-factor'
import { stepUp } from 'authchart/step-up'
import { createLocalOp } from './local-op.js'
import { createMailbox } from './mailbox.js'

/** The demo user, printed at start. */
export const DEMO_USER = {
  username: 'demo',
  password: 'authchart-demo',
  user: { id: 'demo-user', name: 'Demo User', email: 'demo@example.com' },
}

/** The version of the demo's terms that new users accept. */
export const DEMO_TERMS_VERSION = '2026-11'

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
<link rel="icon" href="/favicon.ico">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}
pre{background:#f4f4f5;padding:1rem;border-radius:.5rem;overflow:auto}a{color:#346df1}
form.inline{display:inline}form.inline button{font:inherit;color:#346df1;background:none;border:0;padding:0;text-decoration:underline;cursor:pointer}
.notice{background:#ecfdf5;border:1px solid #34d399;border-radius:.5rem;padding:.5rem 1rem}</style></head>
<body>${body}</body></html>`

const FAVICON = readFileSync(new URL('./favicon.ico', import.meta.url))

/** The port the demo listens on when PORT is not set. */
export const DEFAULT_PORT = 3000

/**
 * Builds the demo app, to be listened on at `host`:`port`. `dataDir` holds its secret and its
 * embedded PostgreSQL (PGlite) database, where users and sessions live, so sessions survive
 * restarts. The "Local OP" OpenID Provider is served by the same app at `/op`.
 */
export async function createDemoApp({ dataDir = '.demo-data', logger = false, port = 3000, host = 'localhost' } = {}) {
  mkdirSync(dataDir, { recursive: true })
  const origins = [...new Set([host, 'localhost', '127.0.0.1'])].map((h) => `http://${h}:${port}`)
  const localOp = createLocalOp({ issuer: `http://${host}:${port}/op`, origins })
  // Sign-in e-mails go to an SMTP server inside the demo; /dev/mailbox shows what it received.
  const mailbox = await createMailbox()
  const db = new PGlite(join(dataDir, 'pglite'))
  const adapter = PostgresAdapter(db)
  await adapter.migrate()
  // The demo's own table for the terms step: which version each user accepted.
  await db.exec('CREATE TABLE IF NOT EXISTS demo_terms (user_id TEXT PRIMARY KEY, version TEXT NOT NULL)')
  const authConfig = {
    secret: demoSecret(dataDir),
    trustHost: true,
    // With an adapter, sessions are database sessions (the cookie holds only a session token).
    adapter,
    // The live flow inspector at /auth/__flows (development NODE_ENV and loopback clients only).
    inspector: flowInspector(),
    // Two-step verification, brought in by its import: signed-in users turn it on at
    // /auth/two-factor, and every sign-in of theirs then asks for a code.
    secondFactor: totp({ issuer: 'authchart demo' }),
    // Step-up: adding a passkey, turning two-step verification off or signing out everywhere with
    // a sign-in older than ten minutes asks to confirm it's you first (/auth/step/reauthenticate).
    stepUp: stepUp(),
    // An application step: new users accept the terms before their first session.
    extensions: [
      termsExtension({
        at: 'afterFirstSignIn',
        version: DEMO_TERMS_VERSION,
        html: '<p>This is a demo: anything you do here stays on this machine.</p>',
        acceptedVersion: async (userId) =>
          (await db.query('SELECT version FROM demo_terms WHERE user_id = $1', [userId])).rows[0]?.version ?? null,
        recordAcceptance: async (userId, version) => {
          await db.query(
            'INSERT INTO demo_terms (user_id, version) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET version = $2',
            [userId, version],
          )
        },
      }),
    ],
    // Passkeys are experimental, in Auth.js and here: the flag says you know.
    experimental: { enableWebAuthn: true },
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
      // Accounts with a password: "Create an account" and "Forgot your password?" on the sign-in
      // page; the confirmation and reset links arrive in the development mailbox.
      Password(),
      {
        id: 'local-op',
        name: 'Local OP',
        type: 'oidc',
        issuer: localOp.issuer,
        clientId: localOp.client.clientId,
        clientSecret: localOp.client.clientSecret,
        checks: ['pkce', 'state', 'nonce'],
        // Signing out of the demo signs out of the Local OP too (RP-initiated logout), so the next
        // "Sign in with Local OP" shows its login page instead of silently reusing its session.
        logout: true,
      },
      // Magic links (opened through a "Sign in as …" page) and a one-time code in the same message.
      Nodemailer({ id: 'email', name: 'Email', server: mailbox.smtpUrl, from: 'authchart demo <demo@authchart.test>', code: true }),
      // Sign up with an e-mail address and a passkey, sign in with it (or from the autofill of the
      // e-mail field). Browsers allow passkeys on http://localhost, not on an IP address.
      Passkey(),
    ],
  }

  const app = Fastify({ logger })
  app.addHook('onClose', async () => {
    await mailbox.close()
    await db.close()
  })
  // The Local OP reads its own request bodies, so it is served before Fastify parses them.
  app.addHook('onRequest', async (request, reply) => {
    const url = request.raw.url ?? ''
    if (url !== '/op' && !url.startsWith('/op/') && !url.startsWith('/op?')) return
    reply.hijack()
    await localOp.handle(request.raw, reply.raw)
    return reply
  })
  await app.register(fastifyAuth, authConfig)

  /** The CSRF token of this request's forms, fetched once from the app's own `/auth/csrf` (its cookie passed on). */
  const csrfTokens = new WeakMap()
  async function csrfToken(request, reply) {
    if (!csrfTokens.has(request)) {
      const csrf = await app.inject({ method: 'GET', url: '/auth/csrf', headers: { host: request.headers.host, cookie: request.headers.cookie ?? '' } })
      const setCookie = csrf.headers['set-cookie']
      if (setCookie) reply.header('set-cookie', setCookie)
      csrfTokens.set(request, csrf.json().csrfToken)
    }
    return csrfTokens.get(request)
  }

  /**
   * The password form of the protected page: "Change your password" for a user who has one, "Set a
   * password" for one who signed in another way. It posts to the Password provider's sign-in route,
   * which asks to confirm it's you first when the sign-in is older than ten minutes.
   */
  async function passwordForm(request, reply, email) {
    // The session shows no user id (as in Auth.js); the address finds the user. The demo account
    // of the credentials form is no user of the database: it has no password to set.
    const user = email ? await adapter.getUserByEmail(email) : null
    if (!user) return ''
    const hasPassword = (await adapter.getUserPassword(user.id)) !== null
    return `<h2>${hasPassword ? 'Change your password' : 'Set a password'}</h2>
<form method="post" action="/auth/signin/password" id="password-form">
<input type="hidden" name="csrfToken" value="${escapeHtml(await csrfToken(request, reply))}">
<input type="hidden" name="intent" value="${hasPassword ? 'change' : 'set'}">
<input type="hidden" name="callbackUrl" value="/protected?password=saved">
<p><label for="new-password">New password</label> <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="8"></p>
<p><label><input type="checkbox" name="endOtherSessions" value="false"> Stay signed in on my other devices</label></p>
<p><button type="submit">${hasPassword ? 'Change password' : 'Set password'}</button></p></form>`
  }

  /**
   * A sign-out button: the form the built-in sign-out page posts, with the CSRF token fetched from
   * the app's own `/auth/csrf` (its cookie is passed on to the browser) and a callback URL that
   * lands on the confirmation page.
   */
  async function signOutButton(request, reply) {
    return `<form class="inline" method="post" action="/auth/signout">
<input type="hidden" name="csrfToken" value="${escapeHtml(await csrfToken(request, reply))}">
<input type="hidden" name="callbackUrl" value="/signed-out"><button type="submit" id="sign-out">Sign out</button></form>`
  }

  app.get('/favicon.ico', async (_request, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(FAVICON),
  )

  app.get('/', async (request, reply) => {
    const session = await getSession(request, authConfig)
    const signedIn = Boolean(session?.user)
    const account = signedIn
      ? `<p>Signed in as <strong>${escapeHtml(session.user.name ?? session.user.email)}</strong>. ${await signOutButton(request, reply)}</p>`
      : `<p>You are not signed in. <a href="/auth/signin?callbackUrl=/protected" id="sign-in">Sign in</a>: with the demo account (user <code>${DEMO_USER.username}</code>, password <code>${DEMO_USER.password}</code>), with <strong>a password</strong> (create an account on the sign-in page; its confirmation link arrives in the development mailbox), with <strong>Local OP</strong>, an OpenID Provider running inside this app, with <strong>Email</strong> (a link and a one-time code), or with <strong>a passkey</strong>: a new e-mail address signs up with one, a known one (or the autofill) signs in.</p>`
    return reply.type('text/html').send(
      page(
        'authchart demo',
        `<h1>authchart demo</h1>${account}<ul>
<li><a href="/protected">Protected page</a>${signedIn ? '' : ' (sends you to sign in first)'}</li>
<li><a href="/auth/sessions">Your sessions</a>: where you are signed in, and signing out of each${signedIn ? '' : ' (after signing in)'}</li>
<li><a href="/dev/mailbox">Development mailbox</a>: the sign-in e-mails the demo "sent", with their links and codes</li>
<li><a href="/auth/providers">Providers (JSON)</a> · <a href="/auth/session">Session (JSON)</a></li>
<li><a href="/auth/__flows">Flow inspector</a>: the charts every request runs through, with recent traces (development only)</li></ul>`,
      ),
    )
  })

  app.get('/dev/mailbox', async (_request, reply) =>
    reply.type('text/html').header('cache-control', 'no-store').send(page('Development mailbox', mailbox.render())),
  )

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
<p><a href="/auth/two-factor">Two-step verification</a> · <a href="/auth/sessions">Your sessions</a> · <a href="/auth/signin?callbackUrl=/protected" id="add-passkey">Add a passkey</a> (the sign-in page offers it while you are signed in; both ask you to confirm it's you when you signed in more than ten minutes ago) · ${await signOutButton(request, reply)} · <a href="/">Home</a></p>
${request.query?.password === 'saved' ? '<p class="notice" id="password-saved">Your password was saved.</p>' : ''}
${await passwordForm(request, reply, session.user.email)}`,
      ),
    )
  })

  app.get('/signed-out', async (request, reply) => {
    const session = await getSession(request, authConfig)
    const text = session?.user
      ? `<p>You are still signed in as <strong>${escapeHtml(session.user.name ?? session.user.email)}</strong>.</p>`
      : '<p class="notice" id="signed-out">You are signed out. Your session was ended on the server, not only forgotten by this browser.</p>'
    return reply.type('text/html').send(
      page('Signed out', `<h1>Signed out</h1>${text}<p><a href="/">Home</a> · <a href="/auth/signin?callbackUrl=/protected">Sign in again</a></p>`),
    )
  })

  return app
}

/** Whether `host`:`port` can be listened on; the error code when it cannot. */
function probePort(port, host) {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', (error) => resolve(error.code ?? 'EUNKNOWN'))
    probe.listen({ port, host }, () => probe.close(() => resolve(null)))
  })
}

/** What to tell the developer when the demo cannot listen. */
export function listenProblem(code, port, host) {
  const retry = `Choose another port: PORT=${port === DEFAULT_PORT ? DEFAULT_PORT + 1 : DEFAULT_PORT} npm run demo (HOST picks the interface, default localhost).`
  if (code === 'EADDRINUSE') {
    return `Port ${port} on ${host} is already in use (is another \`npm run demo\` running?). ${retry}`
  }
  if (code === 'EACCES') return `Port ${port} on ${host} needs privileges this user lacks. ${retry}`
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return `HOST=${host} is not an address of this machine. Try HOST=localhost.`
  return null
}

/**
 * Starts the demo as `npm run demo` does. The port is checked before anything else opens: a second
 * demo must not open the first one's database. Returns the listening app, or `null` after
 * explaining on `err` why it could not listen (no stack trace for a busy port).
 */
export async function serveDemo({ port = DEFAULT_PORT, host = 'localhost', dataDir = '.demo-data', out = console.log, err = console.error } = {}) {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    err(`PORT must be a number from 0 to 65535, got "${port}".`)
    return null
  }
  const problem = listenProblem(await probePort(port, host), port, host)
  if (problem) {
    err(problem)
    return null
  }
  const app = await createDemoApp({ dataDir, port, host })
  try {
    await app.listen({ port, host })
  } catch (error) {
    await app.close()
    const late = listenProblem(error.code, port, host)
    if (!late) throw error
    err(late)
    return null
  }
  out(`authchart demo on http://${host}:${port}`)
  out(`Sign in with username "${DEMO_USER.username}" and password "${DEMO_USER.password}",`)
  out('or with "Local OP", an OpenID Provider served by the demo itself at /op,')
  out(`or by e-mail: links and codes land in http://${host}:${port}/dev/mailbox.`)
  out(`or sign up with a passkey (browsers allow them on http://localhost, not on an IP address).`)
  return app
}
