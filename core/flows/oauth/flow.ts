/**
 * The OAuth 2 / OIDC sign-in flow: the machine and its effects. Every protocol step goes through
 * oauth4webapi; this module decides what to ask and what a failure means for the user.
 *
 * @module
 */
import * as oauth from 'oauth4webapi'
import { validate } from 'superstruct'
import { OAuthSignInContext, type OAuthSignInContext as Context } from '../../../machines/oauth-signin.logic.js'
import type { oauthSignInMachine } from '../../../machines/oauth-signin.machine.js'
import { oauthSigninChart } from '../../charts/oauth-signin.js'
import type { SignInCompletionContext } from '../../../machines/signin-completion.machine.js'
import type { AdapterAccount, AdapterUser } from '../../adapters.js'
import { isAllowedOrigin } from '../../config/origins.js'
import { defineCompiledFlow } from '../../engine/compiled-flow.js'
import type { CookieOption } from '../../cookies.js'
import {
  AuthError,
  InvalidCallbackUrl,
  InvalidCheck,
  OAuthAccountNotLinked,
  OAuthCallbackError,
  OAuthProfileParseError,
  OAuthSignInError,
  UntrustedHost,
} from '../../errors.js'
import type { FlowContext, RequestContext } from '../../config/types.js'
import type { ResolvedOAuthProvider, TokenSet } from '../../oauth/provider.js'
import { exchangeAuthorizationCode, fetchUpstreamProfile } from '../../oauth/exchange.js'
import { pushAuthorizationRequest } from '../../oauth/par.js'
import { DPOP_KEY_FIELD, dpopHandle, generateDPoPKeyPair, openDPoPKeyPair, sealDPoPKeyPair } from '../../oauth/dpop.js'
import { authorizationServer, clientOf } from '../../oauth/server.js'
import { LEGACY_PROXY_STATE_SALT, openProxyState, sealProxyState } from '../../oauth/proxy-state.js'

// What the session flow uses for OAuth providers, through this module once it is loaded.
export { authorizationServer } from '../../oauth/server.js'
export { RefreshRejected, refreshAccessToken } from '../../oauth/refresh.js'
// The re-authentication at a provider starts from the sign-in chart's empty context.
export { initialOAuthSignInContext } from '../../../machines/oauth-signin.logic.js'
// Logout by the provider (back- and front-channel) comes with the OAuth flow: only OIDC providers send it.
export {
  endProviderSessions,
  logoutFlow,
  providerSessionClaims,
  providerSessionOf,
  recordProviderSession,
  respondFrontChannelPage,
} from '../logout/flow.js'
import { signedInAdapterUser } from '../../session/current.js'
import { stepUpDemand } from '../reauthenticate/gate.js'
import { createLinkedUser } from '../../session/adapter.js'
import { pkceChallenge } from '../../fast/sync-crypto.js'
import { lookUpAccount, storeAccountTokens } from '../account.js'
import { effects, fail } from '../effect.js'
import { adapterView } from '../module.js'
import type { Account, ResponseInternal, User } from '../../types.js'
import { emitEvent } from '../emit.js'
import type { StoredUser } from '../types.js'
import { isUnverifiedPasskeyUser } from '../passkey-users.js'

/**
 * Salt of the sealed `state` a redirect proxy forwards on, as authchart wrote it before it wrote
 * Auth.js's format (`oauth/proxy-state.ts`, which still reads it).
 */
export const PROXY_STATE_SALT = LEGACY_PROXY_STATE_SALT

/** Parameters a sign-in request may not override: they carry the protocol's guarantees. */
const PROTECTED_PARAMS = new Set([
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'request',
  'request_uri',
])

/** The OAuth description of the request's provider. */
export function oauthProviderOf(ctx: RequestContext): ResolvedOAuthProvider {
  return ctx.provider!.oauth!
}

/**
 * The cookie carrying the sealed OAuth flow: the `state` cookie of the config (its name and
 * options stay overridable through `cookies.state`). It replaces Auth.js's separate state, PKCE
 * and nonce cookies: all three secrets travel inside the one envelope.
 */
export function oauthEnvelopeCookie(ctx: RequestContext): CookieOption {
  const cookie = ctx.cookies.state
  // Stryker disable next-line OptionalChaining: eq#flows-oauth-1
  if (!ctx.provider?.oauth?.formPost) return cookie
  // A form_post callback is a cross-site POST: a SameSite=Lax cookie would not come back with it.
  return { name: cookie.name, options: { ...cookie.options, sameSite: 'none', secure: true } }
}

/**
 * Refuses an OAuth sign-in whose requested `callbackUrl` the `redirect` callback turned away (by
 * default: another origin). Auth.js would silently sign the user in and land them on our origin;
 * an attacker's crafted link should instead fail before the user is sent to the provider.
 *
 * @throws {InvalidCallbackUrl} when the callback URL was refused.
 */
export async function refuseForeignCallbackUrl(ctx: RequestContext): Promise<undefined> {
  // Stryker disable next-line OptionalChaining: eq#flows-oauth-2
  const requested = ctx.request.body?.callbackUrl ?? ctx.request.query.callbackUrl
  // None requested (the callback-url cookie's value is the application's to allow). An empty or
  // non-string callbackUrl never gets here: the request was already refused with a 400.
  if (typeof requested !== 'string') return undefined
  const wanted = new URL(requested, ctx.origin)
  // Stryker disable next-line ConditionalExpression: eq#flows-oauth-3
  if (ctx.callbackUrl !== wanted.href && new URL(ctx.callbackUrl, ctx.origin).origin !== wanted.origin) {
    throw new InvalidCallbackUrl(`The redirect callback refused the callback URL ${wanted.origin}`)
  }
  return undefined
}

/**
 * Whether the redirect proxy of `provider` may send a callback to `origin`: the proxy's own origin,
 * or one on the configured allowlist (`redirectProxyOrigins`). Never a host a request merely
 * claims: a forged Host, X-Forwarded-Host or absolute-form target would otherwise have the proxy
 * hand a victim's authorization code to the attacker (who holds the matching flow cookie).
 */
function proxyMayForwardTo(ctx: RequestContext, provider: ResolvedOAuthProvider, origin: string): boolean {
  return new URL(provider.redirectProxyUrl!).origin === origin || isAllowedOrigin(ctx.config.redirectProxyOrigins, origin)
}

/**
 * Behind a redirect proxy, the callback URL sealed into `state` for the proxy to forward to.
 *
 * @throws {UntrustedHost} when the request's origin is neither the proxy's nor on the allowlist.
 */
function proxiedCallbackUrl(ctx: RequestContext, provider: ResolvedOAuthProvider): string {
  if (!proxyMayForwardTo(ctx, provider, ctx.origin)) {
    throw new UntrustedHost(
      `The origin ${ctx.origin} is not in redirectProxyOrigins (AUTH_REDIRECT_PROXY_ORIGINS): a sign-in through the redirect proxy must start on an allowed origin`,
    )
  }
  return `${ctx.authUrl}/callback/${provider.id}`
}

/**
 * When this deployment is the redirect proxy of the request's provider and the callback's `state`
 * was sealed by another deployment (sharing our secret), sends the browser on to that deployment's
 * callback with every parameter. Only origins sealed with our secret and on the allowlist are
 * followed, so the proxy is neither an open redirect nor a courier of codes to a forged origin.
 *
 * @throws {InvalidCheck} when the state cannot be opened or names an origin off the allowlist.
 */
export async function forwardProxiedCallback(
  ctx: RequestContext,
  params: Record<string, string>,
): Promise<ResponseInternal | undefined> {
  const provider = oauthProviderOf(ctx)
  if (!provider.redirectProxyUrl || new URL(provider.redirectProxyUrl).origin !== ctx.origin) {
    return undefined
  }
  if (params.state === undefined) return undefined
  const state = await openProxyState(params.state, ctx.config.secrets, ctx.at)
  if (!state || typeof state.origin !== 'string' || !URL.canParse(state.origin)) {
    throw new InvalidCheck('State could not be decoded', { provider: provider.id })
  }
  const target = new URL(state.origin)
  if (target.origin === ctx.origin) return undefined
  if (!proxyMayForwardTo(ctx, provider, target.origin)) {
    throw new InvalidCheck(`The redirect proxy refused to forward to ${target.origin}: not in redirectProxyOrigins`, {
      provider: provider.id,
    })
  }
  return { redirect: `${state.origin}?${new URLSearchParams(params)}`, cookies: ctx.setCookies }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Where the provider sends the user back to: our callback, or the redirect proxy's. */
function redirectUriOf(ctx: RequestContext, provider: ResolvedOAuthProvider): string {
  return provider.redirectProxyUrl ?? `${ctx.authUrl}/callback/${provider.id}`
}

async function validatedCallback(
  provider: ResolvedOAuthProvider,
  as: oauth.AuthorizationServer,
  context: Context,
): Promise<URLSearchParams> {
  const expectedState = provider.checks.has('state') ? (context.state ?? oauth.expectNoState) : oauth.skipStateCheck
  return oauth.validateAuthResponse(as, clientOf(provider), new URLSearchParams(context.callbackParams), expectedState)
}

/** The provider's token fields an account carries (every one: see {@link accountOf}). */
const tokensOf = (account: Account) => account as unknown as TokenSet

/** The account as the callbacks see it: every token field, plus who it belongs to. */
function accountOf(provider: ResolvedOAuthProvider, tokens: TokenSet, providerAccountId: string): Account {
  return { ...tokens, provider: provider.id, type: provider.type, providerAccountId } as Account
}

/**
 * What a JWT session keeps of the provider's tokens, only for providers that opt in: what it needs
 * to refresh the access token (`refreshTokens`) and to sign out at the provider (`logout`).
 */
function sessionTokenClaims(provider: ResolvedOAuthProvider, tokens: TokenSet): Record<string, unknown> | null {
  const refreshing = provider.refreshTokens && typeof tokens.refresh_token === 'string'
  const loggingOut = provider.logout && typeof tokens.id_token === 'string'
  if (!refreshing && !loggingOut) return null
  return {
    oauth: {
      provider: provider.id,
      ...(refreshing
        ? {
            access_token: tokens.access_token,
            refresh_token: tokens.refresh_token,
            expires_at: tokens.expires_at,
            ...(typeof tokens[DPOP_KEY_FIELD] === 'string' ? { [DPOP_KEY_FIELD]: tokens[DPOP_KEY_FIELD] } : {}),
          }
        : {}),
      ...(loggingOut ? { id_token: tokens.id_token } : {}),
    },
  }
}

/**
 * Stores an OAuth/OIDC sign-in's user (reference §5.1 account linking): an account already linked
 * signs its user in (refused when someone else is signed in) and gets the fresh tokens; otherwise
 * the account is linked to the signed-in user, to a user with the same e-mail address only with
 * `allowDangerousEmailAccountLinking` (never one signed up with a passkey for an address nobody
 * verified, {@link isUnverifiedPasskeyUser}), or to a new user.
 */
export async function storeOAuthUser(ctx: RequestContext, context: SignInCompletionContext): Promise<StoredUser> {
  const provider = ctx.config.providerById.get(context.providerId)!.oauth!
  const adapter = ctx.config.adapter!
  const account = context.account as unknown as Account
  const providerUser = context.user as User
  const stored: AdapterAccount = {
    ...provider.account(account as unknown as TokenSet),
    provider: account.provider,
    type: provider.type,
    providerAccountId: account.providerAccountId,
    userId: '',
    // The key pair the tokens are bound to (DPoP), sealed: a database session refreshes with it.
    ...(provider.dpop && typeof tokensOf(account)[DPOP_KEY_FIELD] === 'string' ? { [DPOP_KEY_FIELD]: tokensOf(account)[DPOP_KEY_FIELD] } : {}),
  } as AdapterAccount
  const notLinked = (message: string): StoredUser => {
    ctx.logger.error(new OAuthAccountNotLinked(message, { provider: provider.id }))
    return { notLinked: 'OAuthAccountNotLinked' }
  }
  const signedIn = await signedInAdapterUser(ctx)
  const linked = context.storedUser as unknown as AdapterUser | null
  let user: AdapterUser
  let isNewUser = false
  if (linked) {
    if (signedIn && String(signedIn.id) !== String(linked.id)) {
      return notLinked('The account is already associated with another user')
    }
    user = linked
    // A repeat sign-in brings fresh tokens: store them (Auth.js never does, #3599).
    await storeAccountTokens(ctx, { ...stored, userId: String(linked.id) })
  } else {
    const byEmail = !signedIn && providerUser.email ? await adapter.getUserByEmail!(providerUser.email) : null
    if (signedIn) {
      // Linking is a sensitive action: a stale session (a copied cookie) reaching the callback
      // around the sign-in's gate links nothing.
      if (await stepUpDemand(ctx, 'link-account')) return notLinked('The session is too old to link another account: re-authenticate first')
      user = signedIn
    } else if (byEmail) {
      if (!provider.allowDangerousEmailAccountLinking) {
        return notLinked('Another account already exists with the same e-mail address')
      }
      if (await isUnverifiedPasskeyUser(adapter, byEmail)) {
        return notLinked('The account with this e-mail address signed up with a passkey and never verified the address')
      }
      user = byEmail
    } else {
      // Both rows or neither: a retried sign-in never finds a user without its account.
      ;({ user } = await createLinkedUser(adapter, { ...providerUser, emailVerified: null } as AdapterUser, stored))
      await emitEvent(ctx, 'createUser', { user })
      isNewUser = true
    }
    if (!isNewUser) await adapter.linkAccount!({ ...stored, userId: String(user.id) })
    await emitEvent(ctx, 'linkAccount', { user, account, profile: providerUser })
  }
  return {
    user: user as unknown as Record<string, unknown>,
    account: { ...account, userId: String(user.id) },
    isNewUser,
  }
}

/** The authorization request: its URL, and the secrets the callback must match (state, PKCE, nonce). */
async function authorizationRequest(ctx: Env, provider: ResolvedOAuthProvider, context: Context) {
  const as = await authorizationServer(provider)
  if (!as.authorization_endpoint) {
    throw new TypeError('Authorization server did not provide an authorization endpoint.')
  }
  const url = new URL(as.authorization_endpoint)
  const redirectUri = redirectUriOf(ctx, provider)
  const params = url.searchParams
  params.set('response_type', 'code')
  params.set('client_id', provider.clientId)
  params.set('redirect_uri', redirectUri)
  for (const [key, value] of Object.entries(provider.authorizationParams)) params.set(key, value)
  for (const [key, value] of Object.entries(context.authorizationParams)) {
    if (!PROTECTED_PARAMS.has(key) && key !== 'callbackUrl') params.set(key, value)
  }
  if (!params.has('scope')) params.set('scope', 'openid profile email')
  let state: string | null = null
  if (provider.checks.has('state')) {
    // Behind a redirect proxy, state also says where the proxy must send the callback.
    state = provider.redirectProxyUrl
      ? await sealProxyState(proxiedCallbackUrl(ctx, provider), ctx.config.secrets)
      : oauth.generateRandomState()
    params.set('state', state)
  }
  let codeVerifier: string | null = null
  if (provider.checks.has('pkce')) {
    codeVerifier = oauth.generateRandomCodeVerifier()
    params.set('code_challenge', pkceChallenge(codeVerifier) ?? (await oauth.calculatePKCECodeChallenge(codeVerifier)))
    params.set('code_challenge_method', 'S256')
  }
  let nonce: string | null = null
  if (provider.checks.has('nonce')) {
    nonce = oauth.generateRandomNonce()
    params.set('nonce', nonce)
  }
  const target = provider.par ? await pushAuthorizationRequest(provider, as, url) : url
  return { url: target.href, redirectUri, state, codeVerifier, nonce }
}

/** How long a session can live: the life of what is sealed for it. */
const sessionLifetimeOf = (ctx: RequestContext) => Math.max(ctx.config.session.maxAge, ctx.config.session.absoluteMaxAge ?? 0)

/** The context the OAuth effects receive (the account is looked up before the completion). */
type Env = FlowContext<'getUserByAccount'>

/** The OAuth sign-in's effects. */
export const oauthEffects = effects<typeof oauthSignInMachine, Env>(oauthSigninChart, {
  async createAuthorizationRequest(context, ctx) {
    const provider = oauthProviderOf(ctx)
    try {
      return await authorizationRequest(ctx, provider, context)
    } catch (error) {
      // An AuthError (an untrusted origin behind a redirect proxy) is reported as it is.
      if (error instanceof AuthError) throw error
      // Happens before the user leaves for the provider (an unreachable issuer, most often): logged
      // as the sign-in it is, not as a callback. Without an `error` the user lands on the error
      // page with `Configuration`, as Auth.js answers any error that is not its own.
      ctx.logger.error(
        new OAuthSignInError(`The sign-in with "${provider.id}" could not start: ${(error as Error).message}`, {
          err: error as Error,
          provider: provider.id,
        }),
      )
      // Stryker disable next-line StringLiteral: eq#flows-oauth-4
      return fail('threw')
    }
  },

  async validateCallback(context, ctx) {
    const provider = oauthProviderOf(ctx)
    try {
      await validatedCallback(provider, await authorizationServer(provider), context)
      return null
    } catch (error) {
      if (error instanceof oauth.AuthorizationResponseError) {
        const cause = { providerId: provider.id, ...Object.fromEntries(error.cause.entries()) }
        ctx.logger.error(new OAuthCallbackError('OAuth Provider returned an error', cause))
        return fail('providerError', { error: 'OAuthCallbackError' })
      }
      ctx.logger.error(new InvalidCheck(error as Error, { provider: provider.id }))
      // Stryker disable next-line StringLiteral: eq#flows-oauth-4
      return fail('invalid', { error: 'InvalidCheck' })
    }
  },

  async exchangeCode(context, ctx) {
    const provider = oauthProviderOf(ctx)
    const callbackParameters = await validatedCallback(provider, await authorizationServer(provider), context)
    const keyPair = provider.dpop ? await generateDPoPKeyPair() : undefined
    const tokens = await exchangeAuthorizationCode(provider, callbackParameters, context, ctx.at, keyPair && dpopHandle(provider, keyPair))
    if (keyPair) tokens[DPOP_KEY_FIELD] = await sealDPoPKeyPair(keyPair, ctx.config.secrets, sessionLifetimeOf(ctx))
    return { tokens, sessionClaims: sessionTokenClaims(provider, tokens) }
  },

  async fetchProfile(context, ctx) {
    const provider = oauthProviderOf(ctx)
    const tokens = context.tokens as TokenSet
    const sealedKey = tokens[DPOP_KEY_FIELD]
    const dpop = typeof sealedKey === 'string' ? dpopHandle(provider, await openDPoPKeyPair(sealedKey, ctx.config.secrets)) : undefined
    // An upstream that cannot be reached throws: the Configuration error, as any outage.
    const raw = await fetchUpstreamProfile(provider, tokens, context.callbackParams, dpop)
    try {
      if (!isRecord(raw)) throw new TypeError('the profile is not an object')
      if (provider.profileSchema) {
        const [invalid] = validate(raw, provider.profileSchema)
        if (invalid) throw invalid
      }
      const mapped = await provider.profile(raw, tokens)
      const user: User = {
        ...mapped,
        id: crypto.randomUUID(),
        ...(typeof mapped.email === 'string' ? { email: mapped.email.toLowerCase() } : {}),
      }
      const account = accountOf(provider, tokens, mapped.id ?? crypto.randomUUID())
      return { profile: raw, user: user as Record<string, unknown>, account: account as Record<string, unknown> }
    } catch (error) {
      ctx.logger.debug('getProfile error details', raw)
      ctx.logger.error(new OAuthProfileParseError(error as Error, { provider: provider.id }))
      return fail('invalidProfile', { error: 'OAuthProfileParseError' })
    }
  },

  lookUpAccount,
})

/** The OAuth sign-in flow definition. */
export const oauthSignInFlow = defineCompiledFlow<typeof oauthSignInMachine, RequestContext>({
  chart: oauthSigninChart,
  context: OAuthSignInContext,
  effects: adapterView(oauthEffects),
})
