/**
 * The type of a WebAuthn (passkey) provider, as Auth.js names it, and what its hooks receive. A
 * leaf (shapes and type-only imports), so the public config types can name it without an import
 * circle.
 *
 * @module
 */
import type {
  GenerateAuthenticationOptionsOpts,
  GenerateRegistrationOptionsOpts,
  VerifyAuthenticationResponseOpts,
  VerifyRegistrationResponseOpts,
} from '@simplewebauthn/server'
import type { Adapter, Awaitable, CommonProviderOptions, CredentialInput } from '../../shapes.js'

/** The relying party of a ceremony (Auth.js's `getRelayingParty` result). */
export interface RelyingParty {
  id: string
  name: string
  origin: string
}

/** What `getUserInfo` answers: the user an options request is about, and whether it is stored. */
export interface WebAuthnUserInfo {
  user: { id?: string; email?: string | null; name?: string | null; [key: string]: unknown }
  exists: boolean
}

/** The request as `getUserInfo` and `getRelayingParty` see it (a subset of Auth.js's). */
export interface WebAuthnRequest {
  url: URL
  method: 'GET' | 'POST'
  headers: Headers
  query: Readonly<Record<string, string>>
  body?: Readonly<Record<string, unknown>>
}

/** A WebAuthn provider (Auth.js's `WebAuthnConfig`). */
export interface WebAuthnConfig extends CommonProviderOptions {
  type: 'webauthn'
  /** Offer passkeys in the autofill of the sign-in page's e-mail field (one provider at most). */
  enableConditionalUI: boolean
  /** The relying party; arrays name several, the first id and name are used, every origin accepted. */
  relayingParty?: { id?: string | string[]; name?: string | string[]; origin?: string | string[] }
  /** Passed to `generateAuthenticationOptions` (the RP id and allowed credentials are ours). */
  authenticationOptions?: Partial<GenerateAuthenticationOptionsOpts>
  /** Passed to `generateRegistrationOptions` (the RP, user and excluded credentials are ours). */
  registrationOptions?: Partial<GenerateRegistrationOptionsOpts>
  /** Passed to `verifyAuthenticationResponse` (e.g. `requireUserVerification`). */
  verifyAuthenticationOptions?: Partial<VerifyAuthenticationResponseOpts>
  /** Passed to `verifyRegistrationResponse` (e.g. `requireUserVerification`). */
  verifyRegistrationOptions?: Partial<VerifyRegistrationResponseOpts>
  /** The inputs of the built-in form; one needs `autocomplete` containing `webauthn` for conditional UI. */
  formFields: Record<string, CredentialInput>
  /** Who an options request is about; by default the stored user of the `email` query (or body) value. */
  getUserInfo?: (
    options: { adapter: Adapter; provider: WebAuthnConfig },
    request: WebAuthnRequest,
  ) => Awaitable<WebAuthnUserInfo | null>
  /** The relying party for a request; by default `relayingParty`, else the request's host and origin. */
  getRelayingParty?: (options: { provider: WebAuthnConfig; url: URL }, request: WebAuthnRequest) => RelyingParty
  /** Accepted for Auth.js configs and ignored: the browser library is served by us, never a CDN. */
  simpleWebAuthnBrowserVersion?: string | false
}
