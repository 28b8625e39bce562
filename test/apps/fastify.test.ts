/** examples/fastify: the plugin, `request.auth()`, and `requireSession` redirecting to /login. */
import { serverAppSuite } from './server-app-suite.js'

serverAppSuite('fastify', '/login?callbackUrl=%2Fprotected')
