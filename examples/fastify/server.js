import Fastify from 'fastify'
import { fastifyAuth, requireRecentAuth, requireSession } from 'authchart/fastify'
import { authConfig } from './auth.config.js'

const app = Fastify()
await app.register(fastifyAuth, authConfig)

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const html = (reply, body) => reply.type('text/html').send(body)

app.get('/', async (request, reply) => {
  const user = (await request.auth())?.user
  return html(reply, user ? `<p id="who">Signed in as ${escape(user.name)}</p>` : '<p id="who">Not signed in</p>')
})
app.get('/protected', { preHandler: requireSession({ redirectTo: '/login' }) }, async (request, reply) => {
  const { user } = await request.auth()
  return html(reply, `<p id="secret">Hello ${escape(user.name)}, this page is protected.</p>`)
})
// A sensitive page asks for a recent proof (a factor proven in the last 10 minutes): a stale
// session is sent to confirm it's them and comes back here; a fetch gets 401 with the URL to open.
app.get('/security', { preHandler: requireRecentAuth(authConfig, { maxAge: 600 }) }, async (request, reply) => {
  const { user } = await request.auth()
  return html(reply, `<p id="security">Security settings of ${escape(user.name)}</p>`)
})
app.get('/login', (request, reply) => reply.redirect('/auth/signin?callbackUrl=/protected'))

await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
