/**
 * The action names served under `basePath`.
 *
 * @module
 */
import type { AuthAction } from './types.js'

const ACTIONS: ReadonlySet<string> = new Set<AuthAction>([
  'providers',
  'session',
  'csrf',
  'signin',
  'signout',
  'callback',
  'verify-request',
  'error',
  'webauthn-options',
])

/** Whether `action` is one of the actions of spec §4. */
export function isAuthAction(action: string): action is AuthAction {
  return ACTIONS.has(action)
}

/** Actions that may carry a provider id as a second path segment. */
export const ACTIONS_WITH_PROVIDER: ReadonlySet<AuthAction> = new Set<AuthAction>([
  'signin',
  'callback',
  'webauthn-options',
])

/** Actions that render HTML; a misconfiguration answers them with the error page. */
export const PAGE_ACTIONS: ReadonlySet<AuthAction> = new Set<AuthAction>([
  'signin',
  'signout',
  'error',
  'verify-request',
])
