/**
 * Event handlers (spec §6): observed, never trusted to succeed. A throwing handler is logged as
 * `EventError` and the flow goes on.
 *
 * @module
 */
import { eventsOf } from '../config/read.js'
import { EventError } from '../errors.js'
import type { RequestContext } from '../http/context.js'
import { notifyEmitted } from '../observe/notify.js'
import type { EventCallbacks } from '../types.js'

/** Calls `events[name](message)` if configured, logging and swallowing its errors. */
export async function emitEvent<N extends keyof EventCallbacks>(
  ctx: RequestContext,
  name: N,
  message: Parameters<NonNullable<EventCallbacks[N]>>[0],
): Promise<void> {
  if (ctx.config.observers.length > 0) notifyEmitted(ctx, name, message)
  const events = eventsOf(ctx.config)
  const handler = events[name] as ((m: typeof message) => unknown) | undefined
  if (!handler) return
  try {
    await handler.call(events, message)
  } catch (error) {
    ctx.logger.error(new EventError(error as Error))
  }
}
