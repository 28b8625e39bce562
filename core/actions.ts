/**
 * The action names served under `basePath`: Auth.js's (spec §4) and authchart's own.
 *
 * @module
 */
import type { AuthAction } from './types.js'
import type { OwnAction, RoutedAction } from './engine/types.js'

export type { OwnAction, RoutedAction }

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


const OWN_ACTIONS: ReadonlySet<string> = new Set<OwnAction>([
  'step',
  'two-factor',
  'sessions',
  'audit',
  'backchannel-logout',
  'frontchannel-logout',
  'reauthenticate',
  'organization',
  'api-keys',
  'device',
])

/** Whether `action` is one of the actions of spec §4. */
export function isAuthAction(action: string): action is AuthAction {
  return ACTIONS.has(action)
}

/** Whether `action` is served: one of spec §4's or authchart's own. */
export function isRoutedAction(action: string): action is RoutedAction {
  return ACTIONS.has(action) || OWN_ACTIONS.has(action)
}

/** Actions that may carry a provider id (for `step`: a flow id) as a second path segment. */
export const ACTIONS_WITH_PROVIDER: ReadonlySet<RoutedAction> = new Set<RoutedAction>([
  'signin',
  'callback',
  'webauthn-options',
  'step',
  'backchannel-logout',
  'frontchannel-logout',
  'organization',
])

/** Actions whose second path segment names what they act on, neither a provider nor a flow (`/organization/active`). */
export const ACTIONS_WITH_SEGMENT: ReadonlySet<RoutedAction> = new Set<RoutedAction>(['organization'])

/** Actions whose second path segment names a flow rather than a provider. */
export const ACTIONS_WITH_FLOW: ReadonlySet<RoutedAction> = new Set<RoutedAction>(['step'])

/** Actions that render HTML; a misconfiguration answers them with the error page. */
export const PAGE_ACTIONS: ReadonlySet<RoutedAction> = new Set<RoutedAction>([
  'signin',
  'signout',
  'error',
  'verify-request',
  'step',
  'two-factor',
])

/** Actions that answer JSON documents (the API routes); an outage answers them with JSON too. */
export const JSON_ACTIONS: ReadonlySet<RoutedAction> = new Set<RoutedAction>([
  'providers',
  'session',
  'sessions',
  'csrf',
  'webauthn-options',
  'organization',
  'api-keys',
])
