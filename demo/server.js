// `npm run demo`: the demo app on http://localhost:3000 (PORT and HOST override).
import { createDemoApp, DEMO_USER } from './app.js'

// The demo is a development server: its flow inspector is served only when NODE_ENV says so.
process.env.NODE_ENV ??= 'development'
const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? 'localhost'
const app = await createDemoApp({ dataDir: process.env.DEMO_DATA_DIR ?? '.demo-data', port, host })
await app.listen({ port, host })
console.log(`authchart demo on http://${host}:${port}`)
console.log(`Sign in with username "${DEMO_USER.username}" and password "${DEMO_USER.password}",`)
console.log('or with "Local OP", an OpenID Provider served by the demo itself at /op.')

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    app.close().then(() => process.exit(0))
  })
}
