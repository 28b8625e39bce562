// Runs inside the fresh application that test/package/fresh-app.test.ts makes (under tsx, which
// loads the README's .ts files as pasted): imports each README snippet, exercises it through the
// installed package, and prints one JSON object with a result per snippet.
import { Auth } from 'authchart'

const ORIGIN = 'http://localhost'
const results = {}

async function check(name, run) {
  try {
    results[name] = { ok: true, ...(await run()) }
  } catch (error) {
    results[name] = { ok: false, error: String(error?.stack ?? error) }
  }
}

const cookiePairs = (response) => response.headers.getSetCookie().map((c) => c.split(';')[0])

/** Signs alice in with her password through `Auth`, and reads the session with the cookies set. */
async function signIn(config) {
  const csrf = await Auth(new Request(`${ORIGIN}/auth/csrf`), config)
  const csrfCookie = cookiePairs(csrf).join('; ')
  const { csrfToken } = await csrf.json()
  const answer = await Auth(
    new Request(`${ORIGIN}/auth/callback/credentials`, {
      method: 'POST',
      headers: { cookie: csrfCookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken, username: 'alice', password: 'wonderland' }),
    }),
    config,
  )
  const cookies = [csrfCookie, ...cookiePairs(answer)].join('; ')
  const session = await Auth(new Request(`${ORIGIN}/auth/session`, { headers: { cookie: cookies } }), config)
  return { status: answer.status, location: answer.headers.get('location'), session: await session.json() }
}

async function providerIds(config) {
  const response = await Auth(new Request(`${ORIGIN}/auth/providers`), config)
  return { status: response.status, providers: Object.keys(await response.json()) }
}

await check('auth.ts', async () => {
  const { config } = await import('./auth.ts')
  return signIn(config)
})

await check('handler.ts', async () => {
  const { default: handler } = await import('./handler.ts')
  const providers = await handler.fetch(new Request(`${ORIGIN}/auth/providers`))
  const home = await handler.fetch(new Request(`${ORIGIN}/`))
  return { providers: Object.keys(await providers.json()), home: await home.json() }
})

await check('server.ts', async () => {
  const { app } = await import('./server.ts')
  try {
    const { port } = app.server.address()
    const signInPage = await fetch(`http://127.0.0.1:${port}/auth/signin`)
    const home = await fetch(`http://127.0.0.1:${port}/`)
    return { signInPage: signInPage.status, contentType: signInPage.headers.get('content-type'), home: await home.json() }
  } finally {
    await app.close()
  }
})

await check('oauth.ts', async () => {
  const { config } = await import('./oauth.ts')
  const csrf = await Auth(new Request(`${ORIGIN}/auth/csrf`), config)
  const { csrfToken } = await csrf.json()
  const start = await Auth(
    new Request(`${ORIGIN}/auth/signin/github`, {
      method: 'POST',
      headers: { cookie: cookiePairs(csrf).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken }),
    }),
    config,
  )
  return { ...(await providerIds(config)), githubRedirect: start.headers.get('location') }
})

await check('database.ts', async () => {
  const { config } = await import('./database.ts')
  return signIn(config)
})

await check('email.ts', async () => {
  const { config } = await import('./email.ts')
  return providerIds(config)
})

await check('passkeys.ts', async () => {
  const { config } = await import('./passkeys.ts')
  return providerIds(config)
})

await check('organizations.ts', async () => {
  const { config, payInvoice } = await import('./organizations.ts')
  // Nobody signed in: no organisation, no permission.
  const refused = await payInvoice(new Request(`${ORIGIN}/invoices/1/pay`))
  return { ...(await providerIds(config)), anonymousPay: refused.status }
})

await check('extension.ts', async () => {
  const { config } = await import('./extension.ts')
  // A new user (this database has no alice yet through this flow) is asked to choose a name.
  return signIn(config)
})

await check('instances-postgres.ts', async () => {
  const { config, pool } = await import('./instances-postgres.ts')
  try {
    return await signIn(config)
  } finally {
    await pool.end()
  }
})

await check('instances-redis.ts', async () => {
  const { config, redis } = await import('./instances-redis.ts')
  try {
    return await signIn(config)
  } finally {
    redis.disconnect()
  }
})

await check('webhook.ts', async () => {
  const { createHmac } = await import('node:crypto')
  const { verifyWebhook } = await import('./webhook.ts')
  const body = '{"v":1,"kind":"sign-out"}'
  const t = Math.floor(Date.now() / 1000)
  const header = `t=${t},v1=${createHmac('sha256', 'whsec-check').update(`${t}.${body}`).digest('hex')}`
  return { verified: verifyWebhook(header, body, 'whsec-check'), tampered: verifyWebhook(header, `${body} `, 'whsec-check') }
})

console.log(JSON.stringify(results))
// PGlite keeps its worker alive; the checks are done.
process.exit(0)
