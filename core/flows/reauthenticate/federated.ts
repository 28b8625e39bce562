/**
 * The federated factor (`fed`): the signed-in user logs in again at an OpenID provider their
 * account is linked to. The request and the callback go through the OAuth sign-in's own effects
 * (authorization request, callback validation, code exchange and ID token checks); what is decided
 * here is what the answer proves: a login no older than the request, by this user's account at
 * this provider.
 *
 * @module
 */
import { timingSafeEqual } from '../../crypto.js'
import { flowModule } from '../kinds.js'
import type { OAuthSignInContext } from '../../../machines/oauth-signin.logic.js'
import type { FederatedProvider, Federation } from '../../../machines/reauthenticate.logic.js'
import type { RequestContext, ResolvedProvider } from '../../config/types.js'
import type { ResolvedOAuthProvider } from '../../oauth/provider.js'

/**
 * Seconds an `auth_time` may lie before the request and still count: oauth4webapi's default clock
 * tolerance, for a provider whose clock runs a little behind ours.
 */
export const AUTH_TIME_TOLERANCE = 30

/** What a provider's ID token proves for a re-authentication. */
export type FederatedVerdict = 'proven' | 'noAuthTime' | 'stale' | 'otherAccount'

/**
 * Whether the (verified) ID token `claims` prove a new login by this user: `auth_time` present and
 * at or after `requestedAt` (less {@link AUTH_TIME_TOLERANCE}), and `sub` one of `accountIds`, the
 * `providerAccountId`s of the signed-in user's accounts at the provider. A provider that ignored
 * `prompt=login` / `max_age=0` and answered from an old login gives a stale `auth_time`; an account
 * that is another user's, or nobody's here, proves nothing about this session's user.
 */
export function federatedVerdict(
  claims: Readonly<Record<string, unknown>>,
  requestedAt: number,
  accountIds: readonly string[],
): FederatedVerdict {
  const authTime = claims.auth_time
  if (typeof authTime !== 'number' || !Number.isFinite(authTime)) return 'noAuthTime'
  if (authTime < requestedAt - AUTH_TIME_TOLERANCE) return 'stale'
  const sub = claims.sub
  if (typeof sub !== 'string' || sub === '' || !accountIds.some((id) => timingSafeEqual(id, sub))) return 'otherAccount'
  return 'proven'
}

/**
 * The providers a user can log in at again: OpenID Connect providers (an ID token with
 * `auth_time`) whose answer comes back as a top-level GET (a `form_post` answer is a cross-site
 * POST, which the flow's SameSite=Lax cookie does not accompany), at which `providerIds` has an
 * account.
 */
export function federatedProviders(ctx: RequestContext, providerIds: ReadonlySet<string>): FederatedProvider[] {
  return ctx.config.providers
    .filter((provider) => provider.type === 'oidc' && provider.oauth && !provider.oauth.formPost && providerIds.has(provider.id))
    .map((provider) => ({ id: provider.id, name: provider.name }))
}

const stateful = new WeakMap<ResolvedOAuthProvider, ResolvedOAuthProvider>()

/**
 * The provider with state, PKCE and nonce always on: the state is what routes the callback back to
 * this flow, and the nonce binds the ID token to this very request, whatever the sign-in uses.
 * Kept per provider, so its discovery and key set caches are shared across requests.
 */
function withEveryCheck(oauth: ResolvedOAuthProvider): ResolvedOAuthProvider {
  let checked = stateful.get(oauth)
  if (!checked) {
    checked = Object.freeze({ ...oauth, checks: new Set([...oauth.checks, 'state', 'pkce', 'nonce'] as const) })
    stateful.set(oauth, checked)
  }
  return checked
}

/**
 * The request as the OAuth effects see it: at `provider` (every check on). The step page's request
 * names no provider in its path; the OAuth sign-in's effects read the request's provider.
 */
export function atProvider(ctx: RequestContext, provider: ResolvedProvider): RequestContext {
  const oauth = withEveryCheck(provider.oauth!)
  return Object.create(ctx, { provider: { value: Object.freeze({ ...provider, oauth }), enumerable: true } }) as RequestContext
}

/** The OAuth sign-in's context for the re-authentication's request to the provider. */
export function signInContextOf(
  providerId: string,
  federation: Omit<Federation, 'providerId' | 'url' | 'requestedAt'> | null,
  callbackParams: Record<string, string> = {},
): OAuthSignInContext {
  return {
    ...flowModule('oauth').initialOAuthSignInContext,
    providerId,
    // The provider must ask the user to log in now, whatever session it still has.
    authorizationParams: { prompt: 'login', max_age: '0' },
    redirectUri: federation?.redirectUri ?? '',
    state: federation?.state ?? null,
    codeVerifier: federation?.codeVerifier ?? null,
    nonce: federation?.nonce ?? null,
    callbackParams,
  }
}
