/**
 * The audit trail as an observer: it notes what each request's flows passed through and how they
 * ended, and hands the request's events to the sinks once it is answered.
 *
 * @module
 */
import { assert } from 'superstruct'
import type { RequestContext } from '../http/context.js'
import { OBSERVER } from '../observe/brand.js'
import type { Observer, ObserverSettings, ObserverValue } from '../observe/types.js'
import { listActivity } from './activity.js'
import { AuditRecord, deliver, finishAudit, resolveAudit, standaloneEvent } from './record.js'
import { AuditOptionsStruct } from './structs.js'
import type { AuditOptions } from './types.js'

/**
 * The `audit` option: one event per request that advances a sign-in flow (states passed, outcome,
 * user, provider, client) and one per lifecycle change, to each sink; a sink that can list events
 * also serves `GET {basePath}/audit`.
 *
 * @example
 * ```ts
 * import { auditTrail } from 'authchart/audit'
 *
 * Auth(request, { ...config, audit: auditTrail({ sink: (event) => log.info(event) }) })
 * ```
 */
export function auditTrail(options: AuditOptions): ObserverValue<'audit'> {
  return Object.freeze({
    [OBSERVER]: 'audit' as const,
    resolve: (settings: ObserverSettings) => {
      assert(options, AuditOptionsStruct)
      return auditObserver(options, settings)
    },
  })
}

function auditObserver(options: AuditOptions, settings: ObserverSettings): Observer {
  const audit = resolveAudit(options, settings.logger, settings.sharedStore)
  const record = new AuditRecord()
  const auditSettings = { audit, secrets: settings.secrets, logger: settings.logger }
  const { store } = audit
  return Object.freeze({
    kind: 'audit',
    onFlowStep: (request, trace) => record.noteTrace(request, trace),
    onFlowRun: (request, flow, providerId, run) => record.noteRun(request, flow, providerId, run),
    onLifecycle: (request, kind, who) => record.noteLifecycle(request, kind, who),
    onStandalone: async (source, kind, who, outcome) => {
      await deliver(auditSettings, [await standaloneEvent(auditSettings, source, kind, who, outcome, new Date())])
    },
    onEmitted: (request, name, message) => record.noteEmitted(request, name, message),
    onOutcome: async (request, source, answered) => {
      await finishAudit(auditSettings, record, request, source, answered)
    },
    ...(store ? { activity: (ctx: RequestContext, user: { id: string }, page: boolean) => listActivity(ctx, store, user, page) } : {}),
  } satisfies Observer)
}
