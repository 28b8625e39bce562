/**
 * The type of a WebAuthn (passkey) provider, as Auth.js names it, and what its hooks receive. A
 * leaf (type-only imports), so the public config types can name it without an import circle; the
 * symbol a provider factory puts its library loader under lives here for the same reason.
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
import type { PROVIDER_FLOW, ProviderFlow } from '../../modules.js'

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
  /**
   * The flow the provider runs, set by the `Passkey` / `WebAuthn` presets (the core has no WebAuthn
   * code of its own): a plain `{ type: 'webauthn' }` object is a compile error, and refused at load.
   */
  readonly [PROVIDER_FLOW]: ProviderFlow
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
  /** How `@simplewebauthn/server` is loaded; set by the provider factories. */
  [SIMPLEWEBAUTHN]?: SimpleWebAuthnLoader
}

/** `@simplewebauthn/server`, as a loader gives it. */
export type SimpleWebAuthn = typeof import('@simplewebauthn/server')

/** `@simplewebauthn/server/helpers`, as a loader gives it. */
export type Helpers = typeof import('@simplewebauthn/server/helpers')

/** `@simplewebauthn/server` and its helpers, as a provider made by `WebAuthn()` or `Passkey()` loads them. */
export type SimpleWebAuthnLoader = () => Promise<[SimpleWebAuthn, Helpers]>

/**
 * The provider factories put their loader of `@simplewebauthn/server` here: an application bundles
 * the library (hundreds of kilobytes with its ASN.1 and X.509 parsers) only by importing a WebAuthn
 * provider, as Auth.js's providers carry their `simpleWebAuthn` functions.
 */
export const SIMPLEWEBAUTHN: unique symbol = Symbol('authchart.simpleWebAuthn')
