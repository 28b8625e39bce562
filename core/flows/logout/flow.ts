/**
 * Logout by the provider (OpenID Connect Back-Channel and Front-Channel Logout): the `logout` chart's
 * effects, and what a sign-in through an OIDC provider records so that the provider can end it
 * later. Loaded with the OAuth flow (./oauth.ts re-exports it), so an application without an OAuth
 * provider never carries it.
 *
 * Which of our sessions a provider session reaches:
 * - JWT sessions carry the provider session (`sid`, and our provider id as `idp`) when the ID token
 *   named one; its end is a per-`sid` not-before time in the store. A logout naming only the
 *   subject (`sub`) finds our users through an index in the store ((provider, sub) → user ids,
 *   written at sign-in) and ends each one's JWT sessions through the per-user not-before time of
 *   "sign out everywhere". Both need a configured store (session reads consult it only then).
 * - Database sessions record the provider session with the row (adapters with
 *   `deleteProviderSessions`), or else in an index in the store ((provider, sid) and (provider,
 *   sub) → session tokens, encrypted with the secret); a logout deletes the rows.
 *
 * @module
 */
import { decodeJwt } from 'jose/jwt/decode'
import { LogoutContext, type LogoutContext as Context } from '../../../machines/logout.logic.js'
import type { logoutMachine } from '../../../machines/logout.machine.js'
import { logoutChart } from '../../charts/logout.js'
import type { ProviderSession } from '../../adapters.js'
import { sha256Hex } from '../../crypto.js'
import { defineCompiledFlow } from '../../engine/compiled-flow.js'
import type { ResolvedConfig } from '../../config/types.js'
import type { RequestContext } from '../../http/context.js'
import { HTML_NO_STORE_HEADERS } from '../../http/handlers.js'
import { decode, encode, type JWT } from '../../jwt.js'
import { issuerOf, JTI_TTL, LogoutTokenInvalid, verifyLogoutToken } from '../../oauth/logout-token.js'
import type { ResolvedOAuthProvider } from '../../oauth/provider.js'
import { escapeHtml } from '../../pages/html.js'
import { pagePolicy } from '../../pages/policy.js'
import { renderCardPage } from '../../pages/steps.js'
import {
  endJwtSessionsOf,
  endJwtSessionsOfProviderSession,
  PROVIDER_CLAIM,
  PROVIDER_SESSION_CLAIM,
  providerSessionOfToken,
} from '../../session/lifecycle.js'
import { currentSession, type CurrentSession } from '../../session/current.js'
import { revokeCachedProviderSessions, revokeCachedSessionTokens } from '../../session/cache.js'
import type { Account, ResponseInternal } from '../../types.js'

/** The cookie-codec salt of the session tokens kept in the store's index: a key of its own. */
const INDEX_SALT = 'authchart.logout-index'
/** Index members: a user id (JWT sessions) or an encrypted session token (database sessions). */
const USER_MEMBER = 'u:'
const SESSION_MEMBER = 's:'

/** Why a logout request is refused or failed, as logged (never the token). */
export class LogoutRefused extends Error {
  override name = 'LogoutRefused'
}

/**
 * The OpenID Connect provider session an account was signed in with: the provider's `sub` and, when
 * its ID token carried one, `sid`. `null` for an OAuth 2 account or one without an ID token.
 */
export function providerSessionOf(account: Account): ProviderSession | null {
  if (account.type !== 'oidc' || typeof account.id_token !== 'string') return null
  // The ID token was verified by the code exchange this account comes from.
  const claims = decodeJwt(account.id_token)
  if (typeof claims.sub !== 'string' || claims.sub === '') return null
  const sid = typeof claims.sid === 'string' && claims.sid !== '' ? claims.sid : undefined
  return { provider: account.provider, sub: claims.sub, ...(sid !== undefined ? { sid } : {}) }
}

/** What a JWT records of the provider session: `sid` and `idp`, only when the provider sent a `sid`. */
export function providerSessionClaims(session: ProviderSession | null): Record<string, unknown> {
  return session?.sid === undefined ? {} : { [PROVIDER_SESSION_CLAIM]: session.sid, [PROVIDER_CLAIM]: session.provider }
}

const indexKey = async (ctx: RequestContext, kind: 'sid' | 'sub', provider: string, value: string) =>
  `logout:${kind}:${await sha256Hex(`${provider}\u0000${value}\u0000${ctx.config.secrets[0]}`)}`

/** How long an index entry is kept: as long as the session it names can live. */
const sessionLifetime = (ctx: RequestContext) => Math.max(ctx.config.session.maxAge, ctx.config.session.absoluteMaxAge ?? 0)

async function sealSessionToken(ctx: RequestContext, sessionToken: string): Promise<string> {
  const sealed = await encode({
    token: { t: sessionToken } as unknown as JWT,
    secret: ctx.config.secrets[0],
    salt: INDEX_SALT,
    maxAge: sessionLifetime(ctx),
  })
  return `${SESSION_MEMBER}${sealed}`
}

/** The session token a member of the index seals; `null` for any other member (a JWT session's user). */
async function openSessionToken(ctx: RequestContext, member: string): Promise<string | null> {
  try {
    const { t } = (await decode({ token: member.slice(SESSION_MEMBER.length), secret: [...ctx.config.secrets], salt: INDEX_SALT })) as {
      t: string
    }
    return t
  } catch {
    return null
  }
}

/** A session just issued, as {@link recordProviderSession} indexes it. */
export type { IssuedSession } from '../types.js'
import type { IssuedSession } from '../types.js'

/**
 * Indexes a new session by the provider session it was signed in with, where the session itself
 * cannot be found by it: a JWT session's user by (provider, sub), when a store is configured (a
 * logout naming only the subject); a database session whose adapter keeps no provider session, by
 * (provider, sid) and (provider, sub). Nothing happens where no logout could use it.
 *
 * @throws the store's error: a session the provider could not end is not issued.
 */
export async function recordProviderSession(ctx: RequestContext, session: ProviderSession, issued: IssuedSession): Promise<void> {
  const { store, adapter } = ctx.config
  if (!store.addToSet) return
  const ttl = sessionLifetime(ctx)
  if (issued.strategy === 'jwt') {
    // Session reads consult the store only when one is configured: an index would serve nothing.
    if (!ctx.config.sharedStore) return
    await store.addToSet(await indexKey(ctx, 'sub', session.provider, session.sub), `${USER_MEMBER}${issued.userId}`, ttl)
    return
  }
  // The adapter recorded it with the row (createSessionRow passed it on).
  if (adapter!.deleteProviderSessions) return
  const member = await sealSessionToken(ctx, issued.sessionToken)
  await store.addToSet(await indexKey(ctx, 'sub', session.provider, session.sub), member, ttl)
  if (session.sid !== undefined) await store.addToSet(await indexKey(ctx, 'sid', session.provider, session.sid), member, ttl)
}

/** The members of an index set. */
async function indexed(ctx: RequestContext, kind: 'sid' | 'sub', provider: string, value: string): Promise<string[]> {
  const { store } = ctx.config
  if (!store.setMembers) throw new TypeError('the store has no sets (addToSet, setMembers): sessions cannot be found by the provider session')
  return store.setMembers(await indexKey(ctx, kind, provider, value))
}

/**
 * Ends every session of ours signed in through `provider`'s session `sid` or, with only `sub`,
 * through any session of that subject there; returns how many sessions (or, for JWT sessions by
 * subject, users) it reached.
 *
 * @throws {TypeError} when the configuration cannot end them: JWT sessions without a configured
 *   store, database sessions without `deleteProviderSessions` or a store with sets. The store's or
 *   the adapter's errors on an outage.
 */
export async function endProviderSessions(
  ctx: RequestContext,
  provider: string,
  { sid, sub }: { sid: string | null; sub: string | null },
): Promise<number> {
  const { config, at } = ctx
  if (config.session.strategy === 'jwt') {
    if (sid !== null) {
      await endJwtSessionsOfProviderSession(config, provider, sid, at)
      return 1
    }
    if (!config.sharedStore) throw new TypeError('ending JWT sessions from the provider needs a `store` in the config')
    const users = (await indexed(ctx, 'sub', provider, sub!)).filter((m) => m.startsWith(USER_MEMBER)).map((m) => m.slice(USER_MEMBER.length))
    await Promise.all(users.map((userId) => endJwtSessionsOf(config, userId, at)))
    return users.length
  }
  const adapter = config.adapter!
  if (adapter.deleteProviderSessions) {
    await revokeCachedProviderSessions(config, provider, { sid, sub }, at)
    return adapter.deleteProviderSessions({ provider, ...(sid !== null ? { sid } : {}), ...(sub !== null ? { sub } : {}) })
  }
  const members = sid !== null ? await indexed(ctx, 'sid', provider, sid) : await indexed(ctx, 'sub', provider, sub!)
  const tokens = (await Promise.all(members.map((member) => openSessionToken(ctx, member)))).filter((t) => t !== null)
  await revokeCachedSessionTokens(config, tokens, at)
  await Promise.all(tokens.map((token) => adapter.deleteSession!(token)))
  return tokens.length
}

/**
 * The sessions front-channel requests found to end, per request: the authority's reading of the
 * browser's session, handed from finding it to ending it without reading it twice.
 */
const foundBrowserSessions = new WeakMap<RequestContext, CurrentSession>()

/**
 * This browser's live session when it was signed in through `provider`'s session `sid`, else
 * `null`. Read through the one authority (./session/current.ts): a session it refuses (ended,
 * expired, signed out everywhere) is no one's, and there is nothing to end.
 */
async function browserSessionFrom(ctx: RequestContext, provider: string, sid: string): Promise<CurrentSession | null> {
  const current = await currentSession(ctx)
  if (!current) return null
  if (current.strategy === 'jwt') {
    const named = providerSessionOfToken(current.token)
    return named?.provider === provider && named.sid === sid ? current : null
  }
  if (ctx.config.adapter!.deleteProviderSessions) {
    const named = current.session.providerSession
    return named?.provider === provider && named.sid === sid ? current : null
  }
  if (!ctx.config.store.setMembers) return null
  const tokens = await Promise.all((await indexed(ctx, 'sid', provider, sid)).map((member) => openSessionToken(ctx, member)))
  return tokens.includes(current.value) ? current : null
}

const oidcProviderOf = (ctx: RequestContext, providerId: string): ResolvedOAuthProvider => {
  const provider = ctx.config.providerById.get(providerId)?.oauth
  // Stryker disable next-line ConditionalExpression: eq#logout-oidc-only
  if (!provider || provider.type !== 'oidc') throw new TypeError(`provider "${providerId}" is not an OpenID Connect provider`)
  return provider
}

function refused(ctx: RequestContext, effect: string, reason: string) {
  ctx.logger.error(new LogoutRefused(`${effect === 'verifyLogoutToken' ? 'Back' : 'Front'}-channel logout refused: ${reason}`))
  return { type: `${effect}.failed`, reason: 'invalid', code: reason, at: ctx.at }
}

function failed(ctx: RequestContext, effect: string, error: unknown) {
  ctx.logger.error(new LogoutRefused(`Logout by the provider failed (${effect})`, { cause: error }))
  return { type: `${effect}.failed`, reason: 'threw', at: ctx.at }
}

const FORM = 'application/x-www-form-urlencoded'

/** The logout flow definition. */
export const logoutFlow = defineCompiledFlow<typeof logoutMachine, RequestContext>({
  chart: logoutChart,
  context: LogoutContext,
  effects: {
    async verifyLogoutToken(context: Context, ctx) {
      // §2.5: a form post with one parameter, logout_token.
      if (context.mediaType !== FORM) return refused(ctx, 'verifyLogoutToken', `the request must be a form post (${FORM})`)
      if (context.logoutToken === null) return refused(ctx, 'verifyLogoutToken', 'logout_token is missing')
      try {
        const claims = await verifyLogoutToken(oidcProviderOf(ctx, context.providerId), context.logoutToken, ctx.at)
        return {
          type: 'verifyLogoutToken.done',
          output: { jti: claims.jti, sid: claims.sid ?? null, sub: claims.sub ?? null },
          at: ctx.at,
        }
      } catch (error) {
        if (error instanceof LogoutTokenInvalid) return refused(ctx, 'verifyLogoutToken', `the logout token is invalid: ${error.message}`)
        return failed(ctx, 'verifyLogoutToken', error)
      }
    },

    async spendLogoutToken(context: Context, ctx) {
      try {
        // §2.6 item 9: a jti already seen is refused, on every instance sharing the store.
        const key = `logout:jti:${await sha256Hex(`${context.providerId}\u0000${context.jti}`)}`
        if (await ctx.config.store.claim(key, JTI_TTL)) return { type: 'spendLogoutToken.done', output: null, at: ctx.at }
        ctx.logger.error(new LogoutRefused('Back-channel logout refused: the logout token was already used (jti)'))
        return { type: 'spendLogoutToken.failed', reason: 'replayed', at: ctx.at }
      } catch (error) {
        return failed(ctx, 'spendLogoutToken', error)
      }
    },

    async endProviderSessions(context: Context, ctx) {
      try {
        const ended = await endProviderSessions(ctx, context.providerId, { sid: context.sid, sub: context.sub })
        ctx.logger.debug('logout by the provider', { provider: context.providerId, ended })
        return { type: 'endProviderSessions.done', output: { ended }, at: ctx.at }
      } catch (error) {
        return failed(ctx, 'endProviderSessions', error)
      }
    },

    async findBrowserSession(context: Context, ctx) {
      // Front-Channel Logout 1.0 §2/§3: iss and sid name the provider session; without them this
      // request could end any session of the browser (a logout forged by any page).
      if (context.iss === null || context.sid === null) return refused(ctx, 'findBrowserSession', 'iss and sid are required')
      try {
        if (context.iss !== (await issuerOf(oidcProviderOf(ctx, context.providerId)))) {
          return refused(ctx, 'findBrowserSession', 'iss is not the provider')
        }
        const found = await browserSessionFrom(ctx, context.providerId, context.sid)
        if (found) {
          foundBrowserSessions.set(ctx, found)
          return { type: 'findBrowserSession.done', output: null, at: ctx.at }
        }
        return { type: 'findBrowserSession.failed', reason: 'notThisSession', at: ctx.at }
      } catch (error) {
        return failed(ctx, 'findBrowserSession', error)
      }
    },

    async endBrowserSession(context: Context, ctx) {
      try {
        const found = foundBrowserSessions.get(ctx)!
        if (found.strategy === 'database') {
          await revokeCachedSessionTokens(ctx.config, [found.value], ctx.at)
          await ctx.config.adapter!.deleteSession!(found.value)
        } else if (ctx.config.sharedStore) {
          // A copy of this cookie elsewhere ends too.
          await endJwtSessionsOfProviderSession(ctx.config, context.providerId, context.sid!, ctx.at)
        }
        return { type: 'endBrowserSession.done', output: null, at: ctx.at }
      } catch (error) {
        return failed(ctx, 'endBrowserSession', error)
      }
    },
  },
})

/** Each configuration's front-channel page headers: its OpenID providers' origins may frame it. */
const frontChannelHeaders = new WeakMap<ResolvedConfig, Record<string, string>>()

/**
 * The origins of the configured OpenID Connect providers (their issuers'), the only sites that may
 * frame the front-channel logout page.
 */
function providerOrigins(config: ResolvedConfig): string[] {
  const origins = new Set<string>()
  for (const provider of config.providers) {
    const issuer = provider.type === 'oidc' ? provider.oauth?.issuer : undefined
    if (issuer === undefined) continue
    try {
      origins.add(new URL(issuer).origin)
    } catch {
      // An issuer that is no URL frames nothing.
    }
  }
  return [...origins]
}

/**
 * The front-channel logout page: shown in an invisible frame of the provider's logout page. Never
 * cached; unlike every other page of ours it may be framed, by the configured OpenID providers'
 * origins only (so no other site can frame it, and there is no `X-Frame-Options`, which cannot
 * name an origin).
 */
export function respondFrontChannelPage(ctx: RequestContext, data: Record<string, unknown>, status = 200): ResponseInternal {
  const text = data.ended === true ? 'You are signed out.' : 'There was no session to end here.'
  const page = renderCardPage('Sign out', ctx.config.theme, `<h1>Sign out</h1><p>${escapeHtml(text)}</p>`, status)
  let headers = frontChannelHeaders.get(ctx.config)
  if (headers === undefined) {
    headers = { ...HTML_NO_STORE_HEADERS, 'Content-Security-Policy': pagePolicy(providerOrigins(ctx.config)) }
    frontChannelHeaders.set(ctx.config, headers)
  }
  return { status: page.status, headers, body: page.html, cookies: ctx.setCookies }
}
