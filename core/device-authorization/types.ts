/**
 * The options of `deviceAuthorization()` and the device request as the store keeps it. A type
 * module (it imports nothing), so the configuration types can name them without linking the
 * feature.
 *
 * @module
 */

/** A public client that may ask for device codes (a CLI, a TV app): it has no secret. */
export interface DeviceClient {
  /** Its `client_id`: 1–64 letters, digits, `-` or `_`. */
  clientId: string
  /** What the approval page calls it ("Acme CLI"). */
  name: string
}

/** What a device is given once the user approves: a session of theirs, carried as a bearer token. */
export type DeviceCredential = 'session'

/** The options of `deviceAuthorization()`. */
export interface DeviceAuthorizationOptions {
  /** The clients that may ask for codes; any other `client_id` is refused (`invalid_client`). */
  clients: readonly DeviceClient[]
  /** Seconds the device code and user code live (default 600, from 60 to 1,800). */
  expiresIn?: number | undefined
  /** Seconds a device waits between polls (default 5, from 1 to 60); a faster poll slows it down by 5 s. */
  interval?: number | undefined
  /** What the device gets: `'session'` (the default), a session of the approving user. */
  issue?: DeviceCredential | undefined
  /**
   * User codes a signed-in user may enter, and codes entered from one address, per window
   * (seconds), counted in the shared store (default 10 per user and 30 per address in 15 minutes).
   */
  userCodeLimit?: { perUser?: number; perAddress?: number; window?: number } | undefined
}

/** The options of `deviceAuthorization()`, with their defaults. */
export interface ResolvedDeviceAuthorizationOptions {
  readonly clients: ReadonlyMap<string, Readonly<DeviceClient>>
  readonly expiresIn: number
  readonly interval: number
  readonly issue: DeviceCredential
  readonly userCodeLimit: { readonly perUser: number; readonly perAddress: number; readonly window: number }
}

/** The user who approved a device request, as the credential is issued for them. */
export interface DeviceApprover {
  id: string
  email: string | null
  name: string | null
}

/** A device request as the store keeps it, under the keyed hash of its device code (never a code itself). */
export interface StoredDeviceRequest {
  clientId: string
  /** Scopes asked, space-separated, or `null`. */
  scope: string | null
  /** Epoch seconds it was asked at, and it expires at. */
  createdAt: number
  expiresAt: number
  /** Where it was asked from, as recorded then (shown on the approval page). */
  address: string | null
  userAgent: string | null
  status: 'pending' | 'approved' | 'denied'
  /** Once approved: who approved it. */
  approver: DeviceApprover | null
}
