/**
 * authchart: authentication as explicit statecharts, a drop-in for Auth.js (`@auth/core`).
 *
 * @module
 */
export { Auth, toResponse } from './auth.js'
export { isAuthAction } from './actions.js'
export { createActionURL, setEnvDefaults } from './env.js'
export { setClientAddress } from './http/request.js'
export { customFetch, raw, skipCSRFCheck } from './symbols.js'
export { assertConfig } from './config/resolve-config.js'
export { recentAuthRequired, requireRecentAuth, type RecentAuth, type StepUpPolicy } from './recent-auth.js'
export type { Factor, FactorTimes } from './session/verification.js'
export { memoryAuthStore, type AuthStore, type LimitResult } from './store/index.js'
export {
  listSessions,
  revokeAllSessions,
  revokeOtherSessions,
  revokeSession,
  sessionId,
  type SessionInfo,
} from './session/manage.js'
export {
  CONTINUE,
  DENY,
  denyBecause,
  EXTENSION_POINTS,
  ExtensionError,
  fail,
  runs,
  toStepPage,
  waitsFor,
  type ExtendedContext,
  type ExtensionPoint,
  type FlowExtension,
  type StepPage,
  type StepView,
} from './extensions.js'
export { stepForm, type ButtonLook } from './pages/steps.js'
export type { ResolvedConfig } from './config/resolve-config.js'
export type { FlowTrace, TraceStep } from './engine/trace.js'
// The audit constants are `authchart/audit`'s; the core carries no audit code.
export type {
  AuditClient,
  AuditEvent,
  AuditKind,
  AuditOptions,
  AuditOutcome,
  AuditSink,
  AuditSinkFunction,
  AuditStore,
  LifecycleKind,
} from './audit/types.js'
export type {
  Account,
  AuthAction,
  AuthConfig,
  Awaitable,
  CallbacksOptions,
  CommonProviderOptions,
  CookiesOptions,
  CredentialInput,
  CredentialsConfig,
  DefaultSession,
  ErrorPageParam,
  EventCallbacks,
  PagesOptions,
  Profile,
  Provider,
  ProviderConfig,
  ProviderType,
  PublicProvider,
  ResponseInternal,
  Session,
  SignInPageErrorParam,
  Theme,
  User,
  UserOptions,
} from './types.js'
export type { JWT } from './jwt.js'
export type { LoggerInstance, WarningCode } from './logger.js'
