/**
 * The sign-in completion flow: the machine every first factor hands its verified identity to, and
 * its effects. How a user is stored differs per first factor (an OAuth account is linked, a
 * credentials account found by its id, an e-mail address verified); each first-factor flow
 * registers that step in {@link USER_STORES}. Everything else — the `signIn` callback, the session,
 * the events — is the same for every way of signing in, and lives only here.
 *
 * @module
 */
import {
  SignInCompletionContext,
  signInCompletionMachine,
  type SignInCompletionContext as Context,
} from '../../machines/signin-completion.machine.js'
import { defineFlow } from '../engine/flow.js'
import type { RequestContext } from '../http/context.js'
import {
  askSignIn,
  checkSignInResult,
  createSessionRow,
  issueJwtSession,
  reportFailure,
} from '../session/issue.js'
import type { Account, Profile, User } from '../types.js'
import { storeCredentialsUser } from './credentials.js'
import { emitEvent } from './emit.js'
import { storeOAuthUser } from './oauth.js'

/** A stored user and account, or a refusal to link them. */
export type StoredUser =
  | { user: Record<string, unknown>; account: Record<string, unknown>; isNewUser: boolean }
  | { notLinked: 'OAuthAccountNotLinked' | 'AccountNotLinked' }

/**
 * Stores the verified identity of one first factor: finds, links or creates the user. Throws on
 * outages (logged, the Configuration error); returns `notLinked` (after logging its own error)
 * when the identity belongs to someone else.
 */
export type UserStore = (ctx: RequestContext, context: Context) => Promise<StoredUser>

/** How each first factor stores its users, by the first factor's flow id. */
export const USER_STORES: Readonly<Record<string, UserStore>> = {
  'credentials-signin': storeCredentialsUser,
  'oauth-signin': storeOAuthUser,
}

const userOf = (context: Context) => context.user as User
const accountOf = (context: Context) => context.account as unknown as Account

/** The sign-in completion flow definition. */
export const signInCompletionFlow = defineFlow<typeof signInCompletionMachine, RequestContext>({
  machine: signInCompletionMachine,
  context: SignInCompletionContext,
  effects: {
    async checkSignIn(context, ctx) {
      const verdict = await askSignIn(ctx, {
        user: userOf(context),
        account: accountOf(context),
        ...(context.profile ? { profile: context.profile as Profile } : {}),
        ...(context.credentials ? { credentials: context.credentials } : {}),
      })
      return checkSignInResult(verdict, ctx.at)
    },

    async storeUser(context, ctx) {
      const store = USER_STORES[context.firstFactor]
      try {
        if (!store) throw new TypeError(`no user store for the first factor "${context.firstFactor}"`)
        const stored = await store(ctx, context)
        if ('notLinked' in stored) {
          return { type: 'storeUser.failed', reason: 'notLinked', error: stored.notLinked, at: ctx.at }
        }
        return { type: 'storeUser.done', output: stored, at: ctx.at }
      } catch (error) {
        return { type: 'storeUser.failed', reason: 'threw', error: reportFailure(ctx, error), at: ctx.at }
      }
    },

    async issueSession(context, ctx) {
      try {
        const output = await issueJwtSession(ctx, {
          user: userOf(context),
          account: accountOf(context),
          ...(context.profile ? { profile: context.profile as Profile } : {}),
          isNewUser: context.isNewUser,
          ...(context.claims ? { claims: context.claims } : {}),
        })
        return { type: 'issueSession.done', output, at: ctx.at }
      } catch (error) {
        return { type: 'issueSession.failed', reason: 'threw', error: reportFailure(ctx, error), at: ctx.at }
      }
    },

    async createDatabaseSession(context, ctx) {
      try {
        const output = await createSessionRow(ctx, String(userOf(context).id))
        return { type: 'createDatabaseSession.done', output, at: ctx.at }
      } catch (error) {
        return {
          type: 'createDatabaseSession.failed',
          reason: 'threw',
          error: reportFailure(ctx, error),
          at: ctx.at,
        }
      }
    },

    async emitSignInEvent(context, ctx) {
      await emitEvent(ctx, 'signIn', {
        user: userOf(context),
        account: accountOf(context),
        // Auth.js announces credentials sign-ins as `{ user, account }` only.
        ...(context.profile
          ? { profile: context.profile as Profile, isNewUser: context.isNewUser }
          : {}),
      })
      return { type: 'emitSignInEvent.done', output: null, at: ctx.at }
    },
  },
})
