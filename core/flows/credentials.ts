/**
 * The credentials sign-in flow: the machine and its effects. User mistakes (a wrong password) are
 * `authorize.failed` with reason `rejected`; anything else the application throws is logged and
 * ends in the Configuration error, so internals never reach the browser.
 *
 * @module
 */
import {
  CredentialsSignInContext,
  credentialsSignInMachine,
} from '../../machines/credentials-signin.machine.js'
import { defineFlow } from '../engine/flow.js'
import {
  AccessDenied,
  AuthError,
  CallbackRouteError,
  CredentialsSignin,
} from '../errors.js'
import type { RequestContext } from '../http/context.js'
import type { JWT } from '../jwt.js'
import { encodeSessionToken } from '../session/token.js'
import type { AdapterUser } from '../adapters.js'
import type { Account, CredentialsConfig, User } from '../types.js'
import { callback } from './callbacks.js'
import { emitEvent } from './emit.js'

/** The request `authorize` receives: the callback URL with the original query, headers and body. */
function authorizeRequest(ctx: RequestContext): Request {
  return new Request(ctx.request.url, {
    method: ctx.request.method,
    headers: ctx.request.headers,
    body: JSON.stringify(ctx.request.body ?? {}),
  })
}

/** The credentials sign-in flow definition. */
export const credentialsSignInFlow = defineFlow<typeof credentialsSignInMachine, RequestContext>({
  machine: credentialsSignInMachine,
  context: CredentialsSignInContext,
  effects: {
    async authorize(context, ctx) {
      const provider = ctx.provider!.config as unknown as CredentialsConfig
      try {
        const user = (await provider.authorize(
          context.credentials ?? {},
          authorizeRequest(ctx),
        )) as (User & Record<string, unknown>) | null | undefined
        if (!user) throw new CredentialsSignin()
        // Auth.js normalises the id in place; callbacks see the same object authorize returned.
        user.id = user.id?.toString() ?? crypto.randomUUID()
        const account: Account = {
          providerAccountId: user.id,
          type: 'credentials',
          provider: context.providerId,
        }
        return { type: 'authorize.done', output: { user, account }, at: ctx.at }
      } catch (error) {
        if (error instanceof CredentialsSignin) {
          ctx.logger.error(error)
          return {
            type: 'authorize.failed',
            reason: 'rejected',
            error: 'CredentialsSignin',
            code: error.code,
            at: ctx.at,
          }
        }
        const reported =
          error instanceof AuthError
            ? error
            : new CallbackRouteError(error as Error, { provider: context.providerId })
        ctx.logger.error(reported)
        return { type: 'authorize.failed', reason: 'threw', error: reported.type, at: ctx.at }
      }
    },

    async checkSignIn(context, ctx) {
      let verdict: boolean | string
      try {
        verdict = await callback(ctx.config, 'signIn')({
          user: context.user as User,
          account: context.account as unknown as Account,
          credentials: context.credentials ?? {},
        })
      } catch (error) {
        const reported = error instanceof AuthError ? error : new AccessDenied(error as Error)
        ctx.logger.error(reported)
        return {
          type: 'checkSignIn.failed',
          reason: 'denied',
          error: reported.type,
          ...(reported instanceof CredentialsSignin ? { code: reported.code } : {}),
          at: ctx.at,
        }
      }
      if (!verdict) {
        ctx.logger.error(new AccessDenied('AccessDenied'))
        return { type: 'checkSignIn.failed', reason: 'denied', error: 'AccessDenied', at: ctx.at }
      }
      if (typeof verdict !== 'string') {
        return { type: 'checkSignIn.done', output: { redirect: null }, at: ctx.at }
      }
      try {
        const redirect = await callback(ctx.config, 'redirect')({ url: verdict, baseUrl: ctx.origin })
        return { type: 'checkSignIn.done', output: { redirect }, at: ctx.at }
      } catch (error) {
        ctx.logger.error(new CallbackRouteError(error as Error))
        return { type: 'checkSignIn.failed', reason: 'denied', error: 'CallbackRouteError', at: ctx.at }
      }
    },

    async issueSession(context, ctx) {
      const user = context.user as User
      const expires = ctx.at + ctx.config.session.maxAge
      try {
        const token = await callback(ctx.config, 'jwt')({
          token: { name: user.name, email: user.email, picture: user.image, sub: user.id },
          user,
          account: context.account as unknown as Account,
          isNewUser: false,
          trigger: 'signIn',
        })
        const value = token === null ? null : await encodeSessionToken(ctx, token as JWT)
        return { type: 'issueSession.done', output: { value, expires }, at: ctx.at }
      } catch (error) {
        ctx.logger.error(
          error instanceof AuthError ? error : new CallbackRouteError(error as Error),
        )
        return { type: 'issueSession.failed', reason: 'threw', error: 'CallbackRouteError', at: ctx.at }
      }
    },

    async createDatabaseSession(context, ctx) {
      const adapter = ctx.config.adapter!
      const user = context.user as User
      try {
        let stored =
          (user.id !== undefined ? await adapter.getUser!(user.id) : null) ??
          (user.email ? await adapter.getUserByEmail!(user.email) : null)
        if (!stored) {
          if (!user.email) {
            throw new TypeError(
              'authorize returned a user that is not in the database and has no email to create it with',
            )
          }
          const created: AdapterUser = {
            id: user.id ?? crypto.randomUUID(),
            name: user.name ?? null,
            email: user.email,
            image: user.image ?? null,
            emailVerified: null,
          }
          stored = await adapter.createUser!(created)
          await emitEvent(ctx, 'createUser', { user: stored })
        }
        const expires = ctx.at + ctx.config.session.maxAge
        const session = await adapter.createSession!({
          sessionToken: ctx.config.session.generateSessionToken(),
          userId: String(stored.id),
          expires: new Date(expires * 1000),
        })
        return {
          type: 'createDatabaseSession.done',
          output: {
            value: session.sessionToken,
            // The cookie follows the stored row, whatever expiry the adapter kept.
            expires: Math.floor(new Date(session.expires ?? expires * 1000).getTime() / 1000),
            user: stored as unknown as Record<string, unknown>,
          },
          at: ctx.at,
        }
      } catch (error) {
        ctx.logger.error(error instanceof AuthError ? error : new CallbackRouteError(error as Error))
        return {
          type: 'createDatabaseSession.failed',
          reason: 'threw',
          error: 'CallbackRouteError',
          at: ctx.at,
        }
      }
    },

    async emitSignInEvent(context, ctx) {
      await emitEvent(ctx, 'signIn', {
        user: context.user as User,
        account: context.account as unknown as Account,
      })
      return { type: 'emitSignInEvent.done', output: null, at: ctx.at }
    },
  },
})
