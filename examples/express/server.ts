import express, { type RequestHandler } from 'express'
import type { AuthConfig } from 'authchart'
import { ExpressAuth, getSession, requireRecentAuth } from 'authchart/express'
import Credentials from 'authchart/providers/credentials'
import OIDC from 'authchart/providers/oidc'
import { totp } from 'authchart/second-factor'
import { stepUp } from 'authchart/step-up'

// AUTH_SECRET comes from the environment (ExpressAuth reads it), and so do AUTH_OP_ID/AUTH_OP_SECRET.
const authConfig = {
  // The /security page asks for a recent sign-in (requireRecentAuth): step-up re-authentication
  // answers it on the spot, brought in by its import.
  secondFactor: totp(), // two-step verification at /auth/two-factor
  stepUp: stepUp(),
  providers: [
    Credentials({
      credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
      authorize: ({ username, password }) =>
        username === 'alice' && password === 'wonderland' ? { id: 'alice', name: 'Alice', email: 'alice@example.com' } : null,
    }),
    ...(process.env.AUTH_OP_ISSUER ? [OIDC({ id: 'op', name: 'Test OP', issuer: process.env.AUTH_OP_ISSUER })] : []),
  ],
} satisfies AuthConfig

const app = express()
app.use('/auth', ExpressAuth(authConfig)) // the mount point, /auth, becomes basePath

// Every page below knows the session; protected pages send visitors to /login.
app.use(async (req, res, next) => {
  res.locals.session = await getSession(req, authConfig)
  next()
})
const requireUser: RequestHandler = (req, res, next) => (res.locals.session?.user ? next() : res.redirect('/login'))
const escape = (text: unknown) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

app.get('/', (req, res) => {
  const user = res.locals.session?.user
  res.send(user ? `<p id="who">Signed in as ${escape(user.name)}</p>` : '<p id="who">Not signed in</p>')
})
app.get('/protected', requireUser, (req, res) => {
  res.send(`<p id="secret">Hello ${escape(res.locals.session.user.name)}, this page is protected.</p>`)
})
// A sensitive page asks for a recent proof (a factor proven in the last 10 minutes): a stale
// session is sent to confirm it's them and comes back here; a fetch gets 401 with the URL to open.
app.get('/security', requireRecentAuth(authConfig, { maxAge: 600 }), (req, res) => {
  res.send(`<p id="security">Security settings of ${escape(res.locals.session?.user?.name)}</p>`)
})
app.get('/login', (req, res) => res.redirect('/auth/signin?callbackUrl=/protected'))

app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1')
