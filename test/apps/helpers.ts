/**
 * What the example-app tests share: the running app from the global setup (failing with the
 * reason when it was not prepared), a cookie-keeping HTTP client, the login-CSRF check of the
 * auth routes, and the app's login form as a user fills it in Chromium.
 *
 * @module
 */
import type { Browser, Page } from 'playwright-core'
import { expect, inject } from 'vitest'
import { CookieJar } from '../fixtures/http.js'
import type { RunningApp } from './setup.js'

/** The app the global setup started. */
export function runningApp(name: 'express' | 'fastify' | 'sveltekit' | 'qwik' | 'next' | 'hono'): RunningApp {
  const app = inject('apps')[name]
  if (!app) throw new Error(`examples/${name} was not prepared: AUTHCHART_APPS=${process.env.AUTHCHART_APPS} leaves it out`)
  return app
}

/** A browser-like client of one app: follows no redirect, keeps cookies. */
export class AppClient {
  readonly jar = new CookieJar()
  constructor(readonly origin: string) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(new URL(path, this.origin), {
      redirect: 'manual',
      headers: { cookie: this.jar.header(), ...headers },
    })
    this.jar.store(response)
    return response
  }

  async post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(new URL(path, this.origin), {
      method: 'POST',
      redirect: 'manual',
      // As a browser's form post: same-origin Origin, and HTML preferred (SvelteKit answers a form
      // action with JSON otherwise).
      headers: {
        cookie: this.jar.header(),
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.origin,
        accept: 'text/html,application/xhtml+xml',
        ...headers,
      },
      body: new URLSearchParams(form),
    })
    this.jar.store(response)
    return response
  }

  /** A CSRF token from the app's auth routes under `basePath` (Next.js: `/api/auth`). */
  async csrfToken(basePath = '/auth'): Promise<string> {
    return ((await (await this.get(`${basePath}/csrf`)).json()) as { csrfToken: string }).csrfToken
  }
}

/**
 * Posts the credentials sign-in form to the auth routes under `basePath` from another site, without
 * the CSRF token (login CSRF), and checks that it is refused: sent to the sign-in page with
 * `MissingCSRF`, and no session cookie set.
 */
export async function expectCrossSiteSignInRefused(origin: string, basePath = '/auth'): Promise<void> {
  const client = new AppClient(origin)
  const response = await client.post(
    `${basePath}/callback/credentials`,
    { username: 'alice', password: 'wonderland' },
    { origin: 'https://attacker.example' },
  )
  expect(response.headers.get('location')).toContain('error=MissingCSRF')
  expect(client.jar.get('authjs.session-token')).toBeUndefined()
}

/** An example app's login form as a user meets it: its page, and the fields and button to use. */
export interface LoginForm {
  /** The login page's path (`/login/` where the app's routes end in a slash). */
  path: string
  /** Selectors of the username field, the password field and the sign-in button. */
  username: string
  password: string
  submit: string
}

/** Types Alice's name and `password` into the login form the page shows, and clicks to sign in. */
export async function submitLoginForm(page: Page, form: LoginForm, password: string): Promise<void> {
  await page.fill(form.username, 'alice')
  await page.fill(form.password, password)
  await page.click(form.submit)
}

/**
 * A user's round trip in Chromium: the protected page at `protectedPath` sends the visitor to the
 * login form; the sign-in lands on the protected page, the home page names Alice, and clicking
 * `signOut` there signs out.
 */
export async function expectSignInAndOutInBrowser(
  browser: Browser,
  origin: string,
  form: LoginForm,
  { protectedPath, signOut }: { protectedPath: string; signOut: string },
): Promise<void> {
  const page = await browser.newPage()
  await page.goto(`${origin}${protectedPath}`)
  expect(new URL(page.url()).pathname).toBe(form.path)
  await submitLoginForm(page, form, 'wonderland')
  await page.waitForSelector('#secret')
  expect(await page.textContent('#secret')).toBe('Hello Alice, this page is protected.')
  await page.goto(`${origin}/`)
  expect(await page.textContent('#who')).toBe('Signed in as Alice')
  await page.click(signOut)
  await page.waitForSelector('text=Not signed in')
  await page.close()
}

/** A wrong password typed into the app's login form is shown on the page as the sign-in error. */
export async function expectWrongPasswordShown(browser: Browser, origin: string, form: LoginForm): Promise<void> {
  const page = await browser.newPage()
  await page.goto(`${origin}${form.path}`)
  await submitLoginForm(page, form, 'nope')
  await page.waitForSelector('#error')
  expect(await page.textContent('#error')).toBe('Sign-in failed: CredentialsSignin')
  await page.close()
}
