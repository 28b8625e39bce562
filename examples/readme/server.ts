import Fastify from 'fastify'
import { fastifyAuth, getSession } from 'authchart/fastify'
import { config } from './auth.js'

export const app = Fastify()
await app.register(fastifyAuth, config) // serves /auth/*: sign-in page, callbacks, session, sign-out

// After signing in, the browser lands here.
app.get('/', async (request) => {
  const session = await getSession(request, config)
  return session ? { signedInAs: session.user, signOut: '/auth/signout' } : { signedIn: false, signIn: '/auth/signin' }
})

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? 'localhost' })
console.log(`Sign in at ${address}/auth/signin`)
