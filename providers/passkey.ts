/**
 * The Passkey provider: WebAuthn with discoverable credentials (resident keys) and user
 * verification required on both ceremonies. Same defaults as Auth.js's `Passkey`.
 *
 * @module
 */
import WebAuthn, { DEFAULT_WEBAUTHN_TIMEOUT, type WebAuthnOptions } from './webauthn.js'
import type { WebAuthnConfig } from '../core/flows/webauthn/flow.js'

export type { WebAuthnConfig, WebAuthnOptions }

/**
 * Creates a passkey provider (id `passkey`).
 *
 * @example
 * ```ts
 * import Passkey from 'authchart/providers/passkey'
 *
 * const config = { adapter, experimental: { enableWebAuthn: true }, providers: [Passkey({})] }
 * ```
 *
 * @see https://passkeys.dev/
 */
export default function Passkey(options: WebAuthnOptions = {}): WebAuthnConfig {
  return WebAuthn({
    id: 'passkey',
    name: 'Passkey',
    authenticationOptions: { timeout: DEFAULT_WEBAUTHN_TIMEOUT, userVerification: 'required' },
    registrationOptions: {
      timeout: DEFAULT_WEBAUTHN_TIMEOUT,
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    },
    verifyAuthenticationOptions: { requireUserVerification: true },
    verifyRegistrationOptions: { requireUserVerification: true },
    ...options,
  })
}
