/**
 * `authchart/audit`: the audit trail, brought in by an import (`audit: auditTrail({ sink })`), and
 * its event schema.
 *
 * @module
 */
export { auditTrail } from './audit/observer.js'
export { AUDIT_SCHEMA_VERSION, LIFECYCLE_KINDS } from './audit/types.js'
export type {
  AuditClient,
  AuditEvent,
  AuditKind,
  AuditOptions,
  AuditOutcome,
  AuditSchemaVersion,
  AuditSink,
  AuditSinkFunction,
  AuditStore,
  AuditWebhookOptions,
  LifecycleKind,
} from './audit/types.js'
export type { AuditTrail } from './observe/types.js'
