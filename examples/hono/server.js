import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { authHandler, initAuthConfig, verifyAuth } from 'authchart/hono'
import { authConfig } from './auth.config.js'

const app = new Hono()
app.use('*', initAuthConfig(() => authConfig))
app.use('/api/auth/*', authHandler())

// Everything else under /api needs a session: 401 without one.
app.use('/api/*', verifyAuth())
app.get('/api/protected', (c) => {
  const { session, token } = c.get('authUser')
  return c.json({ name: session.user?.name, subject: token?.sub })
})

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' })
