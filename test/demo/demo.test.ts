// First, so oidc-provider (which the demo's Local OP imports) loads without its Node-20 notice.
import '../fixtures/oidc-provider.js'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// @ts-expect-error the demo is plain JavaScript
import { createDemoApp, DEMO_USER, serveDemo } from '../../demo/app.js'
// @ts-expect-error the demo is plain JavaScript
import { LOCAL_OP_USER } from '../../demo/local-op.js'
import { totpCode } from '../../core/second-factor/totp.js'
import { CookieJar } from '../fixtures/http.js'
import { SoftwareAuthenticator } from '../fixtures/software-authenticator.js'

let app: FastifyInstance
let origin: string
let dataDir: string
let port: number

/** A free loopback port: the demo's in-process OpenID Provider must know its issuer URL up front. */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port: free } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return free
}

async function startDemo(): Promise<void> {
  app = (await createDemoApp({ dataDir, port, host: '127.0.0.1' })) as FastifyInstance
  origin = await app.listen({ port, host: '127.0.0.1' })
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'authchart-demo-'))
  port = await freePort()
  await startDemo()
})

afterAll(async () => {
  await app?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

async function get(path: string, jar?: CookieJar): Promise<Response> {
  const response = await fetch(`${origin}${path}`, {
    redirect: 'manual',
    headers: jar ? { cookie: jar.header() } : {},
  })
  jar?.store(response)
  return response
}

async function post(path: string, form: Record<string, string>, jar: CookieJar): Promise<Response> {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  })
  jar.store(response)
  return response
}

async function csrfToken(jar: CookieJar): Promise<string> {
  return ((await (await get('/auth/csrf', jar)).json()) as { csrfToken: string }).csrfToken
}

/** A new user is shown the demo's terms before the first session: accept them when asked. */
async function acceptTermsIfAsked(response: Response, jar: CookieJar): Promise<Response> {
  if (response.headers.get('location') !== `${origin}/auth/step/signin-completion`) return response
  const page = await (await get('/auth/step/signin-completion', jar)).text()
  // Another step (the second factor) is the caller's to answer.
  if (!page.includes('Terms of service')) return response
  return post('/auth/step/signin-completion', { csrfToken: await csrfToken(jar), event: 'terms.accept' }, jar)
}

/** Signs the demo user in with the form, as the sign-in page does. */
async function signInDemoUser(jar: CookieJar, extra: Record<string, string> = {}): Promise<Response> {
  const response = await post(
    '/auth/callback/credentials',
    { username: DEMO_USER.username, password: DEMO_USER.password, csrfToken: await csrfToken(jar), ...extra },
    jar,
  )
  return acceptTermsIfAsked(response, jar)
}

describe('the demo over real HTTP', () => {
  it('lists the credentials provider, passwords, the Local OP, e-mail and passkeys at GET /auth/providers', async () => {
    const response = await get('/auth/providers')
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      credentials: {
        id: 'credentials',
        name: 'Demo account',
        type: 'credentials',
        signinUrl: `${origin}/auth/signin/credentials`,
        callbackUrl: `${origin}/auth/callback/credentials`,
      },
      password: {
        id: 'password',
        name: 'Password',
        type: 'password',
        signinUrl: `${origin}/auth/signin/password`,
        callbackUrl: `${origin}/auth/callback/password`,
      },
      'local-op': {
        id: 'local-op',
        name: 'Local OP',
        type: 'oidc',
        signinUrl: `${origin}/auth/signin/local-op`,
        callbackUrl: `${origin}/auth/callback/local-op`,
      },
      email: {
        id: 'email',
        name: 'Email',
        type: 'email',
        signinUrl: `${origin}/auth/signin/email`,
        callbackUrl: `${origin}/auth/callback/email`,
      },
      passkey: {
        id: 'passkey',
        name: 'Passkey',
        type: 'webauthn',
        signinUrl: `${origin}/auth/signin/passkey`,
        callbackUrl: `${origin}/auth/callback/passkey`,
      },
    })
  })

  /** Follows redirects like a browser until a page answers (or the app's own pages are reached). */
  async function follow(location: string, jar: CookieJar): Promise<{ url: string; response: Response }> {
    let url = new URL(location, origin).href
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } })
      jar.store(response)
      let next = response.headers.get('location')
      // A first sign-in: the demo's terms come before the session.
      if (url === `${origin}/auth/step/signin-completion` && !next) {
        const accepted = await acceptTermsIfAsked(new Response(null, { status: 302, headers: { location: url } }), jar)
        next = accepted.headers.get('location') === url ? null : accepted.headers.get('location')
      }
      if (!next) return { url, response }
      url = new URL(next, url).href
      if (!new URL(url).pathname.startsWith('/op') && !new URL(url).pathname.startsWith('/auth/')) {
        return { url, response }
      }
    }
    throw new Error('too many redirects')
  }

  async function startLocalOpSignIn(jar: CookieJar) {
    const start = await post('/auth/signin/local-op', { csrfToken: await csrfToken(jar), callbackUrl: '/protected' }, jar)
    expect(start.status).toBe(302)
    expect(start.headers.get('location')).toMatch(new RegExp(`^${origin}/op/auth\\?`))
    const login = await follow(start.headers.get('location')!, jar)
    expect(login.response.status).toBe(200)
    const html = await login.response.text()
    expect(html).toContain(LOCAL_OP_USER.name)
    return new URL(/action="([^"]+)"/.exec(html)![1]!, origin).pathname
  }

  it('signs in with the Local OP, offline, through its login page', async () => {
    const signInPage = await (await get('/auth/signin')).text()
    expect(signInPage).toContain(`action="${origin}/auth/signin/local-op"`)
    expect(signInPage).toContain('Local OP')

    const jar = new CookieJar()
    const interaction = await startLocalOpSignIn(jar)
    const answer = await post(interaction, { decision: 'accept' }, jar)
    const landed = await follow(answer.headers.get('location')!, jar)
    expect(landed.url).toBe(`${origin}/protected`)
    const protectedPage = await get('/protected', jar)
    expect(protectedPage.status).toBe(200)
    expect(await protectedPage.text()).toContain(LOCAL_OP_USER.email)
  })

  it('returns to sign-in with OAuthCallbackError when the user cancels at the Local OP', async () => {
    const jar = new CookieJar()
    const interaction = await startLocalOpSignIn(jar)
    const answer = await post(interaction, { decision: 'deny' }, jar)
    const landed = await follow(answer.headers.get('location')!, jar)
    expect(landed.url).toBe(`${origin}/auth/signin?error=OAuthCallbackError`)
    expect((await get('/protected', jar)).status).toBe(302)
  })

  it('serves the built-in sign-in page with the demo form', async () => {
    const response = await get('/auth/signin?callbackUrl=/protected')
    expect(response.status).toBe(200)
    const html = await response.text()
    expect(html).toContain('name="username"')
    expect(html).toContain(`action="${origin}/auth/callback/credentials"`)
  })

  it('sends a visitor without a session from the protected page to sign-in', async () => {
    const response = await get('/protected')
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe('/auth/signin?callbackUrl=%2Fprotected')
  })

  it('signs the demo user in, shows the session on the protected page, and signs out', async () => {
    const jar = new CookieJar()
    const signIn = await signInDemoUser(jar, { callbackUrl: '/protected' })
    expect(signIn.status).toBe(302)
    expect(signIn.headers.get('location')).toBe(`${origin}/protected`)
    // A database session: the cookie holds only the session token.
    expect(jar.get('authjs.session-token')).toMatch(/^[0-9a-f-]{36}$/)

    const protectedPage = await get('/protected', jar)
    expect(protectedPage.status).toBe(200)
    const protectedHtml = await protectedPage.text()
    expect(protectedHtml).toContain('Demo User')
    // The sessions page is one link away, and lists this browser.
    expect(protectedHtml).toContain('<a href="/auth/sessions">Your sessions</a>')
    const sessions = await fetch(`${origin}/auth/sessions`, { headers: { cookie: jar.header(), accept: 'text/html' } })
    expect(await sessions.text()).toContain('This browser')

    const signOut = await post('/auth/signout', { csrfToken: await csrfToken(jar) }, jar)
    expect(signOut.status).toBe(302)
    expect(jar.get('authjs.session-token')).toBeUndefined()
    expect((await get('/protected', jar)).status).toBe(302)
  })

  it('keeps users and sessions in PGlite across a restart', async () => {
    const jar = new CookieJar()
    await signInDemoUser(jar)
    expect((await get('/protected', jar)).status).toBe(200)
    await app.close()
    await startDemo()
    const afterRestart = await get('/protected', jar)
    expect(afterRestart.status).toBe(200)
    expect(await afterRestart.text()).toContain('demo@example.com')
    // A restart opens the PGlite database again (its WebAssembly included): the start's budget.
  }, 60_000)

  it('links to the flow inspector, which draws the flows the demo runs', async () => {
    const home = await (await get('/')).text()
    expect(home).toContain('href="/auth/__flows"')
    const inspector = await get('/auth/__flows')
    expect(inspector.status).toBe(200)
    const html = await inspector.text()
    for (const flow of ['session', 'credentials-signin', 'oauth-signin', 'email-signin', 'webauthn-signin']) {
      expect(html).toContain(`data-flow="${flow}"`)
    }
  })

  /** Asks for a sign-in e-mail and reads it in the development mailbox. */
  async function emailFromMailbox(address: string, jar: CookieJar): Promise<{ link: string; code: string }> {
    const asked = await post('/auth/signin/email', { email: address, csrfToken: await csrfToken(jar), callbackUrl: '/protected' }, jar)
    expect(asked.headers.get('location')).toBe(`${origin}/auth/verify-request?provider=email&type=email`)
    const mailbox = await (await get('/dev/mailbox')).text()
    const first = mailbox.slice(mailbox.indexOf('<li class="message">'))
    expect(first).toContain(`<span class="to">${address}</span>`)
    const link = /<a class="link" href="([^"]+)"/.exec(first)![1]!.replace(/&#38;/g, '&')
    const code = /<code class="code">([^<]+)<\/code>/.exec(first)![1]!
    return { link, code }
  }

  it('signs in with a magic link from the development mailbox, through the confirmation page', async () => {
    expect(await (await get('/auth/signin')).text()).toContain(`action="${origin}/auth/signin/email"`)
    expect(await (await get('/')).text()).toContain('href="/dev/mailbox"')
    const jar = new CookieJar()
    const { link } = await emailFromMailbox('reader@example.com', jar)
    const confirm = await get(new URL(link).pathname + new URL(link).search, jar)
    expect(confirm.status).toBe(200)
    const html = await confirm.text()
    // The address may wrap before its @ and dots (<wbr>), never inside a word.
    expect(html.replace(/<wbr>|<\/?span[^>]*>/g, '')).toContain('Sign in as reader@example.com')
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]),
    )
    // A first sign-in: the demo's terms come before the session.
    const signedIn = await acceptTermsIfAsked(await post('/auth/callback/email', fields, jar), jar)
    expect(signedIn.headers.get('location')).toBe(`${origin}/protected`)
    const protectedPage = await get('/protected', jar)
    expect(protectedPage.status).toBe(200)
    expect(await protectedPage.text()).toContain('reader@example.com')
  })

  it('signs in with the one-time code from the development mailbox, on the verify-request page', async () => {
    const jar = new CookieJar()
    const { code } = await emailFromMailbox('coder@example.com', jar)
    const verifyPage = await (await get('/auth/verify-request?provider=email&type=email', jar)).text()
    expect(verifyPage).toContain('name="code"')
    const signedIn = await acceptTermsIfAsked(await post('/auth/callback/email', { code, csrfToken: await csrfToken(jar) }, jar), jar)
    expect(signedIn.headers.get('location')).toBe(`${origin}/protected`)
    expect(await (await get('/protected', jar)).text()).toContain('coder@example.com')
  })

  it('offers a passkey on its sign-in page: sign up, sign out, sign back in (a software authenticator over real HTTP)', async () => {
    const page = await (await get('/auth/signin')).text()
    expect(page).toContain(`action="${origin}/auth/callback/passkey" method="POST" id="passkey-form"`)
    expect(page).toContain('autocomplete="username webauthn"')

    const authenticator = new SoftwareAuthenticator(origin)
    const jar = new CookieJar()
    type Options = { action: 'register' | 'authenticate'; options: never }
    const ceremony = async ({ action, options }: Options) => {
      const answer = action === 'register' ? authenticator.register(options) : authenticator.authenticate(options)
      return post('/auth/callback/passkey', { action, data: JSON.stringify(answer), callbackUrl: '/protected' }, jar)
    }
    // The demo sends e-mail, so a sign-up first proves the address with the code the page asks for.
    const optionsUrl = '/auth/webauthn-options/passkey'
    const asked = await post(optionsUrl, { email: 'pat@example.com', csrfToken: await csrfToken(jar) }, jar)
    expect(await asked.json()).toEqual({ action: 'verify-email' })
    const mailbox = await (await get('/dev/mailbox')).text()
    const message = mailbox.slice(mailbox.indexOf('<li class="message">'))
    expect(message).toContain('<span class="to">pat@example.com</span>')
    const code = /<code class="code">([^<]+)<\/code>/.exec(message)![1]!
    const registration = (await (await post(optionsUrl, { code, csrfToken: await csrfToken(jar) }, jar)).json()) as Options
    // Signing up is a first sign-in: the demo's terms come before the session.
    const signUp = await acceptTermsIfAsked(await ceremony(registration), jar)
    expect(signUp.headers.get('location')).toBe(`${origin}/protected`)
    expect(await (await get('/protected', jar)).text()).toContain('pat@example.com')

    await post('/auth/signout', { csrfToken: await csrfToken(jar) }, jar)
    expect((await get('/protected', jar)).status).toBe(302)
    const signIn = await ceremony((await (await get(`${optionsUrl}?action=authenticate`, jar)).json()) as Options)
    expect(signIn.headers.get('location')).toBe(`${origin}/protected`)
    expect(await (await get('/protected', jar)).text()).toContain('pat@example.com')
  })

  it('refuses a wrong password with the CredentialsSignin error', async () => {
    const jar = new CookieJar()
    const response = await post(
      '/auth/callback/credentials',
      { username: DEMO_USER.username, password: 'wrong', csrfToken: await csrfToken(jar) },
      jar,
    )
    expect(response.headers.get('location')).toBe(
      `${origin}/auth/signin?error=CredentialsSignin&code=credentials`,
    )
    expect(jar.get('authjs.session-token')).toBeUndefined()
  })

  /** The fields of the form `selector` names (its hidden inputs), and where it posts. */
  function formOf(html: string, action: string): { action: string; fields: Record<string, string> } {
    const form = new RegExp(`<form[^>]*action="${action}"[^>]*>([\\s\\S]*?)</form>`).exec(html)
    expect(form, `a form posting to ${action}`).not.toBeNull()
    const fields: Record<string, string> = {}
    for (const [, name, value] of form![1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[name!] = value!
    return { action, fields }
  }

  async function signInAsDemoUser(jar: CookieJar) {
    const signIn = await signInDemoUser(jar)
    expect(signIn.status).toBe(302)
  }

  it('offers "Sign in" only to visitors, and a sign-out button to a signed-in user', async () => {
    const visitor = await (await get('/')).text()
    expect(visitor).toContain('You are not signed in.')
    expect(visitor).toContain('id="sign-in"')
    expect(visitor).not.toContain('id="sign-out"')

    const jar = new CookieJar()
    await signInAsDemoUser(jar)
    const member = await (await get('/', jar)).text()
    expect(member).toContain('Signed in as <strong>Demo User</strong>')
    expect(member).not.toContain('id="sign-in"')
    expect(member).not.toContain('>Sign in<')
    expect(member).toContain('id="sign-out"')
  })

  it('confirms a sign-out on a page of its own, after ending the session on the server', async () => {
    const jar = new CookieJar()
    await signInAsDemoUser(jar)
    const home = await get('/', jar)
    const { fields } = formOf(await home.text(), '/auth/signout')
    expect(fields.callbackUrl).toBe('/signed-out')
    const signOut = await post('/auth/signout', fields, jar)
    expect(signOut.status).toBe(302)
    expect(signOut.headers.get('location')).toBe(`${origin}/signed-out`)
    const confirmation = await (await get('/signed-out', jar)).text()
    expect(confirmation).toContain('id="signed-out"')
    expect(confirmation).toContain('You are signed out.')
    expect((await get('/protected', jar)).status).toBe(302)
  })

  it('signs out of the Local OP too, so signing in again shows its login page', async () => {
    const jar = new CookieJar()
    const answer = await post(await startLocalOpSignIn(jar), { decision: 'accept' }, jar)
    expect((await follow(answer.headers.get('location')!, jar)).url).toBe(`${origin}/protected`)

    const { fields } = formOf(await (await get('/protected', jar)).text(), '/auth/signout')
    const signOut = await post('/auth/signout', fields, jar)
    const endSession = new URL(signOut.headers.get('location')!)
    expect(`${endSession.origin}${endSession.pathname}`).toBe(`${origin}/op/session/end`)
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${origin}/signed-out`)
    expect((await get('/protected', jar)).status, "the app's session is over").toBe(302)

    // The Local OP asks; the user confirms with the form it rendered.
    const atOp = await follow(endSession.href, jar)
    const html = await atOp.response.text()
    expect(html).toContain('Sign out of Local OP as well?')
    const action = /<form[^>]*action="([^"]+)"/.exec(html)![1]!
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!
    const confirmed = await post(new URL(action, origin).pathname, { xsrf, logout: 'yes' }, jar)
    const landed = await follow(confirmed.headers.get('location')!, jar)
    expect(landed.url).toBe(`${origin}/signed-out`)

    // No silent sign-in: the OP shows its login page again.
    await startLocalOpSignIn(jar)
  })

  it('serves a favicon, linked from its pages', async () => {
    const icon = await get('/favicon.ico')
    expect(icon.status).toBe(200)
    expect(icon.headers.get('content-type')).toBe('image/x-icon')
    expect([...new Uint8Array(await icon.arrayBuffer()).subarray(0, 4)]).toEqual([0, 0, 1, 0])
    expect(await (await get('/')).text()).toContain('<link rel="icon" href="/favicon.ico">')
  })
})

describe('starting the demo', () => {
  it('explains a busy port in one line, naming it and how to choose another, without opening the database', async () => {
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const { port: taken } = busy.address() as { port: number }
    const dir = mkdtempSync(join(tmpdir(), 'authchart-demo-busy-'))
    const out: string[] = []
    const err: string[] = []
    try {
      const started = await serveDemo({ port: taken, host: '127.0.0.1', dataDir: dir, out: (l: string) => out.push(l), err: (l: string) => err.push(l) })
      expect(started).toBeNull()
      expect(out).toEqual([])
      expect(err).toEqual([
        `Port ${taken} on 127.0.0.1 is already in use (is another \`npm run demo\` running?). Choose another port: PORT=3000 npm run demo (HOST picks the interface, default localhost).`,
      ])
      expect(existsSync(join(dir, 'pglite'))).toBe(false)
    } finally {
      await new Promise((resolve) => busy.close(resolve))
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses a PORT that is not a port number', async () => {
    const err: string[] = []
    expect(await serveDemo({ port: Number('abc'), err: (l: string) => err.push(l) })).toBeNull()
    expect(err).toEqual(['PORT must be a number from 0 to 65535, got "NaN".'])
  })

  it('is documented in README with PORT and HOST', () => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8')
    expect(readme).toMatch(/PORT=\d+ npm run demo/)
    expect(readme).toContain('HOST')
  })

  it('asks a new user to accept the terms, and offers two-step verification that the next sign-in asks for', async () => {
    // A fresh data folder: the demo user is new there.
    await app.close()
    rmSync(dataDir, { recursive: true, force: true })
    dataDir = mkdtempSync(join(tmpdir(), 'authchart-demo-'))
    await startDemo()
    const jar = new CookieJar()
    const first = await post(
      '/auth/callback/credentials',
      { username: DEMO_USER.username, password: DEMO_USER.password, csrfToken: await csrfToken(jar) },
      jar,
    )
    expect(first.headers.get('location')).toBe(`${origin}/auth/step/signin-completion`)
    expect(jar.get('authjs.session-token')).toBeUndefined()
    const accepted = await acceptTermsIfAsked(first, jar)
    expect(accepted.headers.get('location')).toBe(origin)
    expect(await (await get('/protected', jar)).text()).toContain('href="/auth/two-factor"')

    const enrol = await post('/auth/two-factor', { csrfToken: await csrfToken(jar) }, jar)
    expect(enrol.headers.get('location')).toBe(`${origin}/auth/step/totp-enrolment`)
    const qrPage = await (await get('/auth/step/totp-enrolment', jar)).text()
    const secret = /<code class="secret">([A-Z2-7]+)<\/code>/.exec(qrPage)![1]!
    const now = Math.floor(Date.now() / 1000)
    const on = await post('/auth/step/totp-enrolment', { csrfToken: await csrfToken(jar), code: totpCode(secret, now) }, jar)
    expect(await on.text()).toContain('Two-step verification is on')
    await post('/auth/signout', { csrfToken: await csrfToken(jar) }, jar)

    const again = await signInDemoUser(jar)
    expect(again.headers.get('location')).toBe(`${origin}/auth/step/signin-completion`)
    const code = await post('/auth/step/signin-completion', { csrfToken: await csrfToken(jar), code: totpCode(secret, now + 30) }, jar)
    expect(code.headers.get('location')).toBe(origin)
    expect((await get('/protected', jar)).status).toBe(200)
  }, 90_000) // starts a second demo (PGlite on disk, the local OP): slow on a loaded machine
})
