// `npm run demo`: the demo app on http://localhost:3000. PORT and HOST choose where it listens,
// DEMO_DATA_DIR where it keeps its database and secret (default .demo-data).
import { DEFAULT_PORT, serveDemo } from './app.js'

// The demo is a development server: its flow inspector is served only when NODE_ENV says so.
process.env.NODE_ENV ??= 'development'
const app = await serveDemo({
  port: process.env.PORT === undefined ? DEFAULT_PORT : Number(process.env.PORT),
  host: process.env.HOST ?? 'localhost',
  dataDir: process.env.DEMO_DATA_DIR ?? '.demo-data',
})

if (!app) process.exitCode = 1
else {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      app.close().then(() => process.exit(0))
    })
  }
}
