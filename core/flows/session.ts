/**
 * The session flow: the session machine and its effects under the `jwt` strategy.
 *
 * @module
 */
import { defineFlow } from '../engine/flow.js'
import {
  SessionContext,
  sessionMachine,
  type SessionContext as Context,
} from '../../machines/session.machine.js'
import { JWTSessionError, SignOutError } from '../errors.js'
import type { RequestContext } from '../http/context.js'
import type { JWT } from '../jwt.js'
import { decodeSessionToken, encodeSessionToken } from '../session/token.js'
import { callback } from './callbacks.js'
import { emitEvent } from './emit.js'

/** Logs a session failure with the error class Auth.js uses for the request kind. */
function logSessionFailure(ctx: RequestContext, context: Context, error: unknown): void {
  const cause = error instanceof Error ? error : new Error(String(error))
  ctx.logger.error(
    context.request === 'signOut' ? new SignOutError(cause) : new JWTSessionError(cause),
  )
}

const stableJson = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return ''
  }
}

/** The session flow definition. */
export const sessionFlow = defineFlow<typeof sessionMachine, RequestContext>({
  machine: sessionMachine,
  context: SessionContext,
  effects: {
    async decodeSessionToken(context, ctx) {
      const { value } = ctx.sessionCookie
      if (!value) return { type: 'decodeSessionToken.failed', reason: 'missing', at: ctx.at }
      try {
        const token = await decodeSessionToken(ctx, value)
        if (!token || typeof token !== 'object') throw new Error('Invalid JWT')
        return { type: 'decodeSessionToken.done', output: { token }, at: ctx.at }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        return { type: 'decodeSessionToken.failed', reason: 'invalid', at: ctx.at }
      }
    },

    async runJwtCallback(context, ctx) {
      const token = context.token as JWT
      const before = stableJson(token)
      try {
        const result = await callback(ctx.config, 'jwt')({
          token,
          ...(context.request === 'update' ? { trigger: 'update' as const } : {}),
          session: context.data,
        })
        const refreshed = result ?? null
        return {
          type: 'runJwtCallback.done',
          output: { token: refreshed, changed: refreshed !== null && stableJson(refreshed) !== before },
          at: ctx.at,
        }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        return { type: 'runJwtCallback.failed', reason: 'threw', at: ctx.at }
      }
    },

    async runSessionCallback(context, ctx) {
      const token = context.token as JWT
      const session = {
        user: { name: token.name, email: token.email, image: token.picture as string | undefined },
        expires: new Date(context.expires * 1000).toISOString(),
      }
      try {
        // Under the jwt strategy Auth.js passes exactly { session, token }; so do we.
        const result = await callback(ctx.config, 'session')({ session, token } as never)
        return { type: 'runSessionCallback.done', output: { session: result }, at: ctx.at }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        return { type: 'runSessionCallback.failed', reason: 'threw', at: ctx.at }
      }
    },

    async encodeSessionToken(context, ctx) {
      try {
        const value = await encodeSessionToken(ctx, context.token as JWT)
        return { type: 'encodeSessionToken.done', output: { value }, at: ctx.at }
      } catch (error) {
        logSessionFailure(ctx, context, error)
        return { type: 'encodeSessionToken.failed', reason: 'threw', at: ctx.at }
      }
    },

    async emitSessionEvent(context, ctx) {
      await emitEvent(ctx, 'session', {
        session: context.session as never,
        token: context.token as JWT,
      })
      return { type: 'emitSessionEvent.done', output: null, at: ctx.at }
    },

    async emitSignOutEvent(context, ctx) {
      await emitEvent(ctx, 'signOut', { token: context.token as JWT })
      return { type: 'emitSignOutEvent.done', output: null, at: ctx.at }
    },
  },
})
