/**
 * The configuration and the request origin of the Next.js integration: next-auth v5's environment
 * defaults (`AUTH_SECRET` or `NEXTAUTH_SECRET`, `basePath` from `AUTH_URL`'s path else
 * `/api/auth`), and the one URL rule of `../shared/request-url.ts` applied to Next's headers.
 *
 * @module
 */
import type { NextRequest } from 'next/server.js'
import { setEnvDefaults, type EnvObject } from '../../core/env.js'
import type { AuthConfig, Awaitable, Session } from '../../core/types.js'
import type { IntegrationConfig } from '../shared/auth.js'
import { configuredOrigin, originFromHeaders, trustsForwardedHeaders } from '../shared/request-url.js'

/** The configuration `NextAuth` takes: the core's, without `raw`, plus the `authorized` callback. */
export interface NextAuthConfig extends Omit<IntegrationConfig, 'callbacks'> {
  callbacks?: NonNullable<IntegrationConfig['callbacks']> & {
    /**
     * Decides, in middleware (`proxy.ts`), whether a request may go on: `true` lets it through,
     * `false` sends the visitor to the sign-in page (and back afterwards), a `Response` is sent as
     * it is (a redirect to a page of its own, a 401).
     */
    authorized?: (params: {
      /** The request to authorize. */
      request: NextRequest
      /** The session of the request, or `null`. */
      auth: Session | null
    }) => Awaitable<boolean | Response | undefined>
  }
}

/** `NextAuth`'s argument: a configuration, or a function of the request that returns one. */
export type NextAuthConfigSource<R> = NextAuthConfig | ((request: R | undefined) => Awaitable<NextAuthConfig>)

/** A configuration with the environment's defaults applied, and what the environment pins. */
export interface NextPrepared {
  readonly config: NextAuthConfig
  /** The origin `AUTH_URL` pins, if any. */
  readonly origin: string | undefined
  /** Whether `X-Forwarded-Host`/`-Proto` count (`AUTH_TRUST_PROXY=true`). */
  readonly trustForwarded: boolean
}

/** The environment, read when first needed: `next build` evaluates modules without the runtime's. */
export const environment = (): EnvObject => (globalThis as { process?: { env: EnvObject } }).process?.env ?? {}

/**
 * next-auth's `basePath`: the configured one, else `AUTH_URL`'s (or `NEXTAUTH_URL`'s) path unless
 * it is `/`, else `/api/auth`.
 */
function basePathOf(config: NextAuthConfig, env: EnvObject): string {
  if (config.basePath) return config.basePath
  const url = env.AUTH_URL ?? env.NEXTAUTH_URL
  if (url && URL.canParse(url)) {
    const { pathname } = new URL(url)
    if (pathname !== '/') return pathname.replace(/\/+$/, '')
  }
  return '/api/auth'
}

const prepared = new WeakMap<object, NextPrepared>()

/**
 * Applies the environment's defaults to a copy of `config`, once per config object; the
 * application's object is never written to. Nothing is validated here: a broken configuration
 * answers as the core answers it (Auth.js's configuration error), and `next build`, which imports
 * the module without the runtime's environment, does not fail on it.
 */
export function prepare(config: NextAuthConfig, env: EnvObject = environment()): NextPrepared {
  const known = prepared.get(config)
  if (known) return known
  const copy = { ...config, basePath: basePathOf(config, env) } as AuthConfig
  if (!copy.secret?.length && !env.AUTH_SECRET && env.NEXTAUTH_SECRET) copy.secret = env.NEXTAUTH_SECRET
  setEnvDefaults(env, copy, true)
  const result: NextPrepared = Object.freeze({
    config: copy as NextAuthConfig,
    origin: configuredOrigin(env),
    trustForwarded: trustsForwardedHeaders(env),
  })
  prepared.set(config, result)
  return result
}

/** Resolves a config source for a request (`undefined` outside one: server components, actions). */
export async function prepareFor<R>(source: NextAuthConfigSource<R>, request: R | undefined): Promise<NextPrepared> {
  return prepare(typeof source === 'function' ? await source(request) : source)
}

/**
 * The origin a request is answered for: `AUTH_URL`'s, else its `Host` over `http:`, the protocol
 * `next start` serves (HTTPS reaches it only through a proxy: `X-Forwarded-Host` and
 * `X-Forwarded-Proto` count with `AUTH_TRUST_PROXY=true` or on Vercel). Never Next's own request
 * URL, whose host on a self-hosted `next start` is the server's listening name (`localhost`), not
 * the one the browser asked for, and whose protocol follows any `X-Forwarded-Proto` a client sends.
 *
 * @throws {RequestError} 400 when the origin must be detected and the host is malformed.
 */
export function originOf(prepared: NextPrepared, headers: Headers): string {
  return prepared.origin ?? originFromHeaders(headers, 'http:', prepared.trustForwarded)
}

/** `basePath` without a trailing slash (`''` for `/`). */
export const baseOf = (config: NextAuthConfig): string => (config.basePath === '/' ? '' : (config.basePath ?? '/api/auth'))
