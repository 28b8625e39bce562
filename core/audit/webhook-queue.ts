/**
 * Webhook deliveries queued through the shared store, so that a restart or a killed instance loses
 * none and exactly one instance sends each attempt.
 *
 * A delivery is kept under `<prefix>d:<event id>` as `{ body, attempt, next }` for long enough to
 * cover every retry, and its id is added to a pending set (one per time bucket as long as that
 * life, so no set outgrows two buckets of traffic). Before an attempt is sent it is claimed with
 * `claim("<prefix><event id>:<attempt>")`: one instance wins each attempt. A success or the last
 * failure removes the record; a failure before the last moves it to the next attempt and time.
 * Each instance sweeps the pending sets (on a timer, and on each event it is given) and sends the
 * deliveries that are due, including those queued by an instance that is gone.
 *
 * @module
 */
import { toHex } from '../crypto.js'
import type { AuthStore } from '../store/types.js'

/** A store that keeps sets: the queue needs {@link AuthStore.addToSet} and {@link AuthStore.setMembers}. */
export type QueueStore = AuthStore & Required<Pick<AuthStore, 'addToSet' | 'setMembers'>>

/** Whether `store` can hold the queue. */
export const keepsSets = (store: AuthStore | undefined): store is QueueStore =>
  store !== undefined && typeof store.addToSet === 'function' && typeof store.setMembers === 'function'

/** One queued delivery, as kept in the store. */
export interface QueuedDelivery {
  /** The event's JSON, exactly as POSTed (signed at each attempt). */
  body: string
  /** The attempt to send next, from 0. */
  attempt: number
  /** When it is due, in milliseconds since the epoch. */
  next: number
}

const encoder = new TextEncoder()

/**
 * The keys of one webhook's queue in `store`. The prefix is a hash of the URL, so two webhooks
 * sharing a store never send each other's events, while instances of one webhook share its queue.
 */
export async function queueKeys(url: string) {
  const digest = await crypto.subtle.digest('SHA-256', encoder.encode(url))
  const prefix = `audit-webhook:${toHex(new Uint8Array(digest)).slice(0, 16)}:`
  return {
    record: (id: string) => `${prefix}d:${id}`,
    claim: (id: string, attempt: number) => `${prefix}${id}:${attempt}`,
    pending: (bucket: number) => `${prefix}pending:${bucket}`,
  }
}

/** Reads a record, `null` when it is gone or not one of ours. */
export function parseDelivery(text: string | null): QueuedDelivery | null {
  if (text === null) return null
  try {
    const value = JSON.parse(text) as Partial<QueuedDelivery>
    if (typeof value.body !== 'string' || !Number.isInteger(value.attempt) || typeof value.next !== 'number') return null
    return value as QueuedDelivery
  } catch {
    return null
  }
}
