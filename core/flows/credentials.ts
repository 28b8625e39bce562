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
import { AuthError, CallbackRouteError, CredentialsSignin } from '../errors.js'
import type { RequestContext } from '../http/context.js'
import { askSignIn, checkSignInResult, createSessionRow, issueJwtSession, reportFailure } from '../session/issue.js'
import type { AdapterUser } from '../adapters.js'
import type { Account, CredentialsConfig, User } from '../types.js'
import { emitEvent } from './emit.js'

/**
 * The request `authorize` receives: the callback URL with the original query, headers and body.
 * Built only if `authorize` touches it: constructing a web Request costs more than the rest of a
 * sign-in, and most `authorize` functions never read it.
 */
function authorizeRequest(ctx: RequestContext): Request {
  let request: Request | undefined
  const real = () =>
    (request ??= new Request(ctx.request.url, {
      method: ctx.request.method,
      headers: ctx.request.headers,
      body: JSON.stringify(ctx.request.body ?? {}),
    }))
  return new Proxy(Object.create(Request.prototype) as Request, {
    get(_target, property) {
      const value = Reflect.get(real(), property, real())
      return typeof value === 'function' ? value.bind(real()) : value
    },
    has: (_target, property) => property in real(),
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
      const verdict = await askSignIn(ctx, {
        user: context.user as User,
        account: context.account as unknown as Account,
        credentials: context.credentials ?? {},
      })
      return checkSignInResult(verdict, ctx.at)
    },

    async issueSession(context, ctx) {
      try {
        const output = await issueJwtSession(ctx, {
          user: context.user as User,
          account: context.account as unknown as Account,
          isNewUser: false,
        })
        return { type: 'issueSession.done', output, at: ctx.at }
      } catch (error) {
        reportFailure(ctx, error)
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
        const row = await createSessionRow(ctx, String(stored.id))
        return {
          type: 'createDatabaseSession.done',
          output: { ...row, user: stored as unknown as Record<string, unknown> },
          at: ctx.at,
        }
      } catch (error) {
        reportFailure(ctx, error)
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
