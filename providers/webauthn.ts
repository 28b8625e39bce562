/**
 * The WebAuthn provider: sign up and sign in with passkeys, verified with `@simplewebauthn/server`.
 * Same factory, defaults and options as Auth.js's `WebAuthn`; experimental there and here, so it
 * needs `experimental: { enableWebAuthn: true }` and an adapter that stores authenticators.
 *
 * @module
 */
import { FLOW_MODULE } from '../core/flows/kinds.js'
import { webauthnModule } from '../core/flows/webauthn/index.js'
import { PROVIDER_FLOW } from '../core/modules.js'
import { SIMPLEWEBAUTHN, type SimpleWebAuthnLoader, type WebAuthnConfig } from '../core/flows/webauthn/flow.js'
import type { UserOptions } from '../core/types.js'

export type { RelyingParty, WebAuthnConfig, WebAuthnUserInfo } from '../core/flows/webauthn/flow.js'

/** Timeout of both ceremonies in milliseconds: 5 minutes, as Auth.js. */
export const DEFAULT_WEBAUTHN_TIMEOUT = 5 * 60 * 1000

/** Options of {@link WebAuthn}: any field of the provider. */
export type WebAuthnOptions = UserOptions<Omit<WebAuthnConfig, 'type'>>

// Imported here, not by the engine: only an application with a WebAuthn provider bundles the library.
const loadSimpleWebAuthn: SimpleWebAuthnLoader = () =>
  Promise.all([import('@simplewebauthn/server'), import('@simplewebauthn/server/helpers')])

// The flow module, which the registry reads from the provider (see core/modules.ts), and its code,
// for the engine to load with this provider (see core/flows/kinds.ts): the core imports neither.
const WEBAUTHN_FLOW = { [PROVIDER_FLOW]: webauthnModule, [FLOW_MODULE]: () => import('../core/flows/webauthn/flow.js') }

/**
 * Creates a WebAuthn provider. The relying party is the request's host and origin unless
 * `relayingParty` (Auth.js's spelling) names them; the built-in sign-in page offers the passkey
 * form, conditional UI (autofill) on its e-mail field, and to a signed-in user a button to add a
 * passkey, with `@simplewebauthn/browser` served inline (nothing loaded from a CDN).
 *
 * @example
 * ```ts
 * import WebAuthn from 'authchart/providers/webauthn'
 *
 * const config = {
 *   adapter, // stores users, accounts and authenticators
 *   experimental: { enableWebAuthn: true },
 *   providers: [WebAuthn({ relayingParty: { id: 'example.com', name: 'Example', origin: 'https://example.com' } })],
 * }
 * ```
 *
 * @see https://www.w3.org/TR/webauthn-3/
 */
export default function WebAuthn(options: WebAuthnOptions = {}): WebAuthnConfig {
  return {
    id: 'webauthn',
    name: 'WebAuthn',
    enableConditionalUI: true,
    authenticationOptions: { timeout: DEFAULT_WEBAUTHN_TIMEOUT },
    registrationOptions: { timeout: DEFAULT_WEBAUTHN_TIMEOUT },
    formFields: {
      email: { label: 'Email', required: true, autocomplete: 'username webauthn' },
    },
    [SIMPLEWEBAUTHN]: loadSimpleWebAuthn,
    ...WEBAUTHN_FLOW,
    ...options,
    type: 'webauthn',
  }
}
