/**
 * Readers of a resolved config that flows and handlers use at request time. Apart from
 * `resolve-config.ts` so that a flow that reads the config does not import the code that builds
 * it (which builds the sign-in completion, and so imports the flows).
 *
 * @module
 */
import type { CookiesOptions } from '../engine/types.js'
import type { CallbacksOptions, EventCallbacks } from '../types.js'
import type { ResolvedConfig } from './types.js'

/** The cookie settings for a request, by its protocol unless `useSecureCookies` is set. */
export function cookiesFor(config: ResolvedConfig, url: URL): CookiesOptions {
  const secure = config.useSecureCookies ?? url.protocol === 'https:'
  return secure ? config.cookies.secure : config.cookies.plain
}

/** The callbacks object of the user's config, read at call time. */
export function callbacksOf(config: ResolvedConfig): CallbacksOptions {
  return config.source.callbacks ?? {}
}

/** The events object of the user's config, read at call time. */
export function eventsOf(config: ResolvedConfig): EventCallbacks {
  return config.source.events ?? {}
}
