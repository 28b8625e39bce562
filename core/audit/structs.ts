/**
 * The schema of {@link auditTrail}'s options, checked when the configuration is resolved (a bad
 * value fails the configuration with `config.audit.<path>` in its message).
 *
 * @module
 */
import { array, enums, func, integer, literal, object, optional, refine, size, string, type, union } from 'superstruct'

/** An audit sink: a function, `'logger'`, or a store with `write` (and `listForUser`). */
const AuditSinkStruct = union([func(), literal('logger'), type({ write: func() })])

/** The options of `auditTrail()`. */
export const AuditOptionsStruct = object({
  sink: optional(union([AuditSinkStruct, array(AuditSinkStruct)])),
  webhook: optional(
    object({
      url: refine(string(), 'http(s) URL', (value) => /^https?:\/\/[^\s]+$/.test(value)),
      secret: size(string(), 16, Infinity),
      events: optional(array(string())),
      attempts: optional(size(integer(), 1, 20)),
      backoff: optional(size(integer(), 1, 3_600_000)),
      timeout: optional(size(integer(), 1, 60_000)),
    }),
  ),
  clientAddress: optional(enums(['hmac', 'raw', 'none'])),
  timeout: optional(size(integer(), 1, 10_000)),
})
