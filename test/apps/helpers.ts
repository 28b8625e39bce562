/**
 * What the example-app tests share: the running app from the global setup (failing with the
 * reason when it was not prepared), a cookie-keeping HTTP client, and the login-CSRF check of the
 * auth routes.
 *
 * @module
 */
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
