/**
 * One limit per recipient for every e-mail we send, whatever the flow: the e-mail sign-in's link
 * and code, a passkey sign-up's code, a re-authentication's code, and any message a later flow
 * sends (a password reset). Each message to an address counts against the same counter, so no flow
 * is a way around another's limit to mail one person in a loop.
 *
 * The limit is the e-mail provider's `throttle.perIdentifier` per `throttle.window` (5 per 15
 * minutes by default). Addresses are counted by the inbox they deliver to (`mailboxOf`: a `+tag`
 * or Gmail's dots are the same inbox) and stored only as a hash.
 *
 * @example
 * ```ts
 * const admission = await admitMessageTo(ctx, user.email, 'password-reset')
 * if (!admission.admitted) return fail('throttled', { error: 'EmailSignInError' })
 * await send(user.email, message)
 * ```
 *
 * @module
 */
import type { RequestContext } from '../config/types.js'
import { sha256Hex } from '../crypto.js'
import { countAttempt } from '../store/limits.js'
import { mailboxOf } from './normalize.js'
import type { ResolvedEmailProvider } from './types.js'

/** How many messages one address may receive, per how many seconds. */
export interface RecipientLimit {
  /** Messages per address per window. */
  perRecipient: number
  /** The window, in seconds (counted from the first message in it). */
  window: number
  /** When the store cannot count: `false` refuses (the store's `ServiceUnavailable`), `true` sends uncounted. */
  failOpen: boolean
}

/** The limit when no e-mail provider sets one: the e-mail provider's own defaults, 5 per 15 minutes. */
export const DEFAULT_RECIPIENT_LIMIT: Readonly<RecipientLimit> = Object.freeze({ perRecipient: 5, window: 900, failOpen: false })

/** Whether a message may be sent, and how many the address has been sent in the window, this one included. */
export type MessageAdmission =
  | { admitted: true; sent: number }
  | { admitted: false; sent: number; limit: RecipientLimit }

/** The recipient limit an e-mail provider's settings give; `null` when its `throttle` is `false`. */
export function recipientLimitOf(settings: Pick<ResolvedEmailProvider, 'throttle'>): RecipientLimit | null {
  const throttle = settings.throttle
  return throttle ? { perRecipient: throttle.perIdentifier, window: throttle.window, failOpen: throttle.failOpen } : null
}

/**
 * The limit that applies to a message of a flow with no provider of its own: the first e-mail
 * provider's (`null` when it turned its throttle off), else {@link DEFAULT_RECIPIENT_LIMIT}.
 */
export function configuredRecipientLimit(ctx: RequestContext): RecipientLimit | null {
  const provider = ctx.config.providers.find((p) => p.type === 'email' && p.email)
  return provider ? recipientLimitOf(provider.email!) : DEFAULT_RECIPIENT_LIMIT
}

/**
 * The store key of an address's counter: the inbox, hashed (the store never holds an address),
 * under the first e-mail provider's id whichever provider or flow sends, so that every message
 * counts together. With one e-mail provider it is the key the e-mail sign-in always used: instances
 * of an older version, during a rolling deploy, count on the same counter.
 */
export async function recipientKey(ctx: RequestContext, address: string): Promise<string> {
  const counter = ctx.config.providers.find((p) => p.type === 'email')?.id ?? 'email'
  return `email:send:${counter}:identifier:${await sha256Hex(mailboxOf(address))}`
}

/**
 * Counts one more message to `address` and says whether it may be sent: at most `limit.perRecipient`
 * in `limit.window` seconds, across every flow. A refusal is logged (`email-send-throttled`, and
 * the flow in the debug log); the caller sends nothing and tells the user to wait. With `limit`
 * `null` (the provider's throttle is off) every message is admitted uncounted.
 *
 * @param flow - the flow sending (`email`, `reauthenticate`, …), for the log only.
 * @param limit - the sending provider's limit ({@link recipientLimitOf}); by default
 *   {@link configuredRecipientLimit}.
 * @throws the store's `ServiceUnavailable` when it cannot count and the limit does not fail open.
 */
export async function admitMessageTo(
  ctx: RequestContext,
  address: string,
  flow: string,
  limit: RecipientLimit | null = configuredRecipientLimit(ctx),
): Promise<MessageAdmission> {
  if (!limit) return { admitted: true, sent: 0 }
  const sent = await countAttempt(ctx.config.store, await recipientKey(ctx, address), limit.window, limit.failOpen, ctx.logger)
  if (sent <= limit.perRecipient) return { admitted: true, sent }
  ctx.logger.warn('email-send-throttled')
  ctx.logger.debug('email-send-throttled', { flow, limit: limit.perRecipient, window: limit.window })
  return { admitted: false, sent, limit }
}
