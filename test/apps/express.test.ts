/** examples/express: `ExpressAuth` on /auth, `res.locals.session`, protected pages redirect to /login. */
import { serverAppSuite } from './server-app-suite.js'

serverAppSuite('express', '/login')
