/**
 * What the example-app tests share: the running app from the global setup (failing with the
 * reason when it was not prepared), and a cookie-keeping HTTP client.
 *
 * @module
 */
import { inject } from 'vitest'
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
