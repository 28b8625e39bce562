/**
 * Microsoft Entra ID (formerly Azure AD), an OpenID Connect provider. `issuer` selects the tenant:
 * `https://login.microsoftonline.com/<tenant id>/v2.0`, or the multi-tenant
 * `…/common/v2.0` (default, also `organizations` and `consumers`), or `AUTH_MICROSOFT_ENTRA_ID_ISSUER`.
 * A multi-tenant discovery document names the issuer `…/{tenantid}/v2.0` and each ID token names
 * the user's tenant (`tid`): both are checked accordingly. The profile photo comes from Microsoft
 * Graph (`profilePhotoSize`, default 48) as a `data:` URL.
 *
 * @module
 */
import type { OAuthConfig, TokenSet } from '../core/oauth/provider.js'
import { customFetch } from '../core/symbols.js'
import type { OAuthUserConfig } from './oauth.js'
import { oidcPreset, type OidcClaims } from './oidc.js'

/** The ID token claims of an Entra ID user (`tid`, `oid` and the others pass through). */
export type MicrosoftEntraIDProfile = OidcClaims

/** The photo sizes Microsoft Graph serves. */
export type ProfilePhotoSize = 48 | 64 | 96 | 120 | 240 | 360 | 432 | 504 | 648

/** Options of {@link MicrosoftEntraID}. */
export interface MicrosoftEntraIDOptions extends OAuthUserConfig<MicrosoftEntraIDProfile> {
  profilePhotoSize?: ProfilePhotoSize
}

/** The default issuer: any work, school or personal account. */
export const ENTRA_COMMON_ISSUER = 'https://login.microsoftonline.com/common/v2.0'

const MULTI_TENANT = new Set(['common', 'organizations', 'consumers'])

/** `AUTH_MICROSOFT_ENTRA_ID_ISSUER` where the runtime has a `process.env` (Auth.js reads it here too). */
function issuerFromEnv(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
  return env?.AUTH_MICROSOFT_ENTRA_ID_ISSUER || undefined
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/** Creates the Microsoft Entra ID provider. */
export default function MicrosoftEntraID(options: MicrosoftEntraIDOptions = {}): OAuthConfig<MicrosoftEntraIDProfile> {
  const { profilePhotoSize = 48, ...rest } = options
  const issuer = rest.issuer ?? issuerFromEnv() ?? ENTRA_COMMON_ISSUER
  const tenant = /microsoftonline\.com\/([^/]+)\/v2\.0/.exec(issuer)?.[1] ?? 'common'
  const providerFetch: typeof fetch = (...args) => (rest[customFetch] ?? fetch)(...args)

  async function photo(tokens: TokenSet): Promise<string | null> {
    const url = `https://graph.microsoft.com/v1.0/me/photos/${profilePhotoSize}x${profilePhotoSize}/$value`
    try {
      const response = await providerFetch(url, { headers: { Authorization: `Bearer ${tokens.access_token}` } })
      if (!response.ok) return null
      // The space after the comma is Auth.js's; browsers ignore it.
      return `data:image/jpeg;base64, ${toBase64(new Uint8Array(await response.arrayBuffer()))}`
    } catch {
      return null // no photo, or Graph unreachable: the sign-in goes on without one
    }
  }

  return oidcPreset(
    {
      id: 'microsoft-entra-id',
      name: 'Microsoft Entra ID',
      authorization: { params: { scope: 'openid profile email User.Read' } },
      conformDiscovery: (metadata) =>
        typeof metadata.issuer === 'string' ? { ...metadata, issuer: metadata.issuer.replace('{tenantid}', tenant) } : metadata,
      // Only a multi-tenant issuer follows the token's tenant; a single-tenant app keeps its own.
      idTokenIssuer: (claims, discovered) =>
        MULTI_TENANT.has(tenant) && typeof claims.tid === 'string'
          ? discovered.replace(`/${tenant}/`, `/${claims.tid}/`)
          : discovered,
      profile: async (profile, tokens) => ({
        id: profile.sub,
        name: profile.name,
        email: profile.email,
        image: await photo(tokens),
      }),
      style: { text: '#fff', bg: '#0072c6' },
    },
    { ...rest, issuer },
  )
}
