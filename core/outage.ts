/**
 * Outages of the parts a request needs (the database adapter, the store): which failures are one,
 * the timeout on every call, and the defaults. A request that meets an outage is answered 503 with
 * `Retry-After`, never a 500 and never a wrong answer (a session read does not report "signed out"
 * because the database is restarting).
 *
 * @module
 */
import type { ResolvedAvailability } from './config/types.js'
import { ServiceUnavailable, type Part } from './errors.js'
import { isThenable } from './thenable.js'

export type { ResolvedAvailability }

/**
 * The defaults: an adapter call may take 5 s (a sign-in makes a few, each normally a millisecond
 * or two), a store call 2 s (one round trip to Redis or one statement), and a client retries 5 s
 * after a 503.
 */
export const DEFAULT_AVAILABILITY: ResolvedAvailability = Object.freeze({
  adapterTimeout: 5000,
  storeTimeout: 2000,
  retryAfter: 5,
  isOutage: isOutageError,
})

/** Connection-level error codes of Node's sockets and DNS. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
])

/**
 * PostgreSQL SQLSTATEs that say the server, not the statement, is the problem: connection
 * exceptions (class 08), too many connections, shutting down or starting up, a statement cancelled
 * by `statement_timeout`, and the transient serialization failure and deadlock (a retry succeeds).
 */
const POSTGRES_STATES = /^(08...|53300|57P0[1-3]|57014|40001|40P01)$/

/** Prisma's codes for an unreachable server or an exhausted or timed-out pool. */
const PRISMA_CODES: ReadonlySet<string> = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024'])

/**
 * Messages of `pg`, `pg-pool`, `ioredis` and rate-limiter-flexible for a connection that is gone
 * or was never made.
 */
const OUTAGE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Connection is closed|Stream isn't writeable|max retries per request|Redis connection is not ready|the database system is (starting up|shutting down|in recovery mode)/i

/** The errors an error wraps: `cause`, and the `cause.err` of Auth.js errors. */
function causesOf(error: object): unknown[] {
  const cause = (error as { cause?: unknown }).cause
  // An absent one is `undefined`, which no check counts as an outage.
  const nested = typeof cause === 'object' && cause !== null ? (cause as { err?: unknown }).err : undefined
  return [cause, nested]
}

/**
 * Whether `error` (or an error it wraps) says a part is unavailable rather than that a statement
 * or a call was wrong: a lost or refused connection, a server shutting down or starting up, an
 * exhausted pool, a timeout.
 */
export function isOutageError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false
  // A ServiceUnavailable is counted by its code, ERR_UNAVAILABLE.
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown }
  // `ERR_UNAVAILABLE` is also how an adapter or store of the application's own can say it.
  if (
    typeof code === 'string' &&
    (code === 'ERR_UNAVAILABLE' || NETWORK_CODES.has(code) || POSTGRES_STATES.test(code) || PRISMA_CODES.has(code))
  ) {
    return true
  }
  if (name === 'MaxRetriesPerRequestError' || name === 'PrismaClientInitializationError') return true
  if (typeof message === 'string' && OUTAGE_MESSAGES.test(message)) return true
  return causesOf(error).some((cause) => isOutageError(cause, depth + 1))
}

/** The {@link ServiceUnavailable} in `error` or among the errors it wraps, if any. */
export function outageOf(error: unknown, depth = 0): ServiceUnavailable | undefined {
  if (typeof error !== 'object' || error === null || depth > 4) return undefined
  if (error instanceof ServiceUnavailable) return error
  for (const cause of causesOf(error)) {
    const found = outageOf(cause, depth + 1)
    if (found) return found
  }
  return undefined
}

/** Outages already in the log, so that the request's answer does not log them a second time. */
const reported = new WeakSet<ServiceUnavailable>()

/** Records that `outage` was logged. */
export function markReported(outage: ServiceUnavailable): void {
  reported.add(outage)
}

/** Whether `outage` was logged already (by the adapter wrapper, or by the effect that met it). */
export function wasReported(outage: ServiceUnavailable): boolean {
  return reported.has(outage)
}

/** The first line of an error's message, for a log line that names the cause. */
function summary(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: unknown }).code
  const first = (error.message || error.name).split('\n')[0]!
  return typeof code === 'string' && !first.includes(code) ? `${first} (${code})` : first
}

/** A call waiting for its answer: when its deadline passes, and how it is failed then. */
interface Waiting {
  readonly until: number
  readonly late: () => void
}

/**
 * The calls waiting under one timeout, oldest first: with one timeout for all of them, the oldest
 * call's deadline is the nearest, so one timer, armed for it, serves every call. (A timer per call,
 * created, inserted into Node's timer list and removed again, cost more than the store lookup it
 * guarded on a session read.) Deadlines are measured on the monotonic clock.
 */
class Deadlines {
  private readonly waiting = new Set<Waiting>()
  private timer: ReturnType<typeof setTimeout> | undefined
  /** When the armed timer is due (`performance.now()` ms). */
  private due = 0

  constructor(private readonly timeout: number) {}

  add(call: Waiting): void {
    this.waiting.add(call)
    if (this.timer === undefined) this.arm(this.timeout)
    // A timer overdue by a whole timeout was lost (cleared by a test's fake timers): the sweep arms another.
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: eq#outage-deadline-heal
    else if (call.until - this.due > 2 * this.timeout) this.sweep()
  }

  delete(call: Waiting): void {
    this.waiting.delete(call)
  }

  private arm(delay: number): void {
    this.due = performance.now() + delay
    this.timer = setTimeout(this.sweep, delay)
    // The timer does not keep the process alive on its own: what a waiting call waits for does.
    // Stryker disable next-line OptionalChaining: eq#outage-deadline-unref
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  /** Fails the calls past their deadline and arms the timer for the oldest one left, if any. */
  private readonly sweep = (): void => {
    clearTimeout(this.timer)
    this.timer = undefined
    const now = performance.now()
    for (const call of this.waiting) {
      // Stryker disable next-line EqualityOperator: eq#outage-deadline-boundary
      if (call.until > now) return this.arm(call.until - now)
      this.waiting.delete(call)
      call.late()
    }
  }
}

/** The deadline queues, one per timeout (ms). */
const deadlines = new Map<number, Deadlines>()

function deadlinesOf(timeout: number): Deadlines {
  let found = deadlines.get(timeout)
  if (!found) deadlines.set(timeout, (found = new Deadlines(timeout)))
  return found
}

/** `error` as the call's failure: an outage becomes a {@link ServiceUnavailable}, anything else is left as it is. */
function failureOf(part: Part, operation: string, availability: ResolvedAvailability, error: unknown): unknown {
  if (error instanceof ServiceUnavailable || !availability.isOutage(error)) return error
  return new ServiceUnavailable(part, `the ${part} is unavailable (${operation}): ${summary(error)}`, availability.retryAfter, {
    cause: error,
  })
}

/**
 * Runs `call` on `part` with a deadline: its answer if it comes within `timeout` ms; otherwise, or
 * when it fails with an outage, a {@link ServiceUnavailable} naming the part, the operation and the
 * cause. Other failures are rethrown as they are.
 *
 * A call that times out is not cancelled (no adapter or store can be told to stop): a write may
 * still land after the request was answered 503. The bundled adapter writes what belongs together
 * in one statement, so such a late write is whole or absent.
 *
 * @throws {ServiceUnavailable} on a timeout or an outage.
 */
export function withDeadline<T>(
  part: Part,
  operation: string,
  availability: ResolvedAvailability,
  call: () => T | Promise<T>,
): Promise<T> {
  let answer: T | Promise<T>
  try {
    answer = call()
  } catch (error) {
    return Promise.reject(failureOf(part, operation, availability, error))
  }
  if (!isThenable(answer)) return Promise.resolve(answer)
  const timeout = part === 'adapter' ? availability.adapterTimeout : availability.storeTimeout
  const queue = deadlinesOf(timeout)
  return new Promise<T>((resolve, reject) => {
    const waiting: Waiting = {
      until: performance.now() + timeout,
      late: () =>
        reject(new ServiceUnavailable(part, `the ${part} did not answer ${operation} within ${timeout} ms`, availability.retryAfter)),
    }
    queue.add(waiting)
    // Both outcomes are handled, so a call that fails after its deadline is not an unhandled rejection.
    ;(answer as PromiseLike<T>).then(
      (value) => {
        queue.delete(waiting)
        resolve(value)
      },
      (error: unknown) => {
        queue.delete(waiting)
        reject(failureOf(part, operation, availability, error))
      },
    )
  })
}
