/**
 * The logout chart's logic: its id, context, events, guards, assignments and outputs, in plain
 * functions (see `shared/logic.ts`). The chart is `logout.machine.ts`.
 *
 * Logout by the provider: the OpenID Connect provider ends the user's session there and tells us,
 * so our sessions signed in through it end too.
 *
 * - Back-channel (OpenID Connect Back-Channel Logout 1.0): the provider posts a signed Logout Token
 *   to `POST {basePath}/backchannel-logout/{provider}`. It is verified (signature, `iss`, `aud`,
 *   `iat`, `typ`, `events`, no `nonce`, `sid` or `sub`), its `jti` spent once, then every session of
 *   ours it names ends: database rows are deleted, JWT sessions refused from then on. Answers JSON:
 *   200, or 400 with an `error` for a refused token or a logout that failed.
 * - Front-channel (OpenID Connect Front-Channel Logout 1.0): the provider loads
 *   `GET {basePath}/frontchannel-logout/{provider}?iss=…&sid=…` in a frame of the user's browser; the
 *   session of that browser ends only when it was signed in through that very provider session.
 *   Answers a small page.
 *
 * The flow never rests: one request, one answer.
 *
 * @module
 */
import { nullable, object, string, type Infer } from 'superstruct'
import type { EffectResult, Timestamped } from './shared/events.js'
import { finalStateOutcome, type FlowOutcome } from './shared/outcome.js'
import { expectEvent, type Assignment, type Guard } from './shared/logic.js'

/** The id of the logout flow. */
export const LOGOUT = 'logout'

/** The page the front-channel request answers with. */
export const FRONT_CHANNEL_PAGE = 'frontchannel-logout'

/** Context of the logout machine. */
export const LogoutContext = object({
  providerId: string(),
  /** The Logout Token as posted (back-channel); `null` when the request carried none. */
  logoutToken: nullable(string()),
  /** How the back-channel request was sent (`Content-Type`, without parameters). */
  mediaType: string(),
  /** The Logout Token's `jti`, spent once. */
  jti: nullable(string()),
  /** The provider session and subject the request names. */
  sid: nullable(string()),
  sub: nullable(string()),
  /** The front-channel request's `iss`. */
  iss: nullable(string()),
  /** Why the request was refused (the JSON error's `error_description`). */
  refusal: nullable(string()),
})
export type LogoutContext = Infer<typeof LogoutContext>

/** Events of the logout machine. */
export type LogoutEvent =
  | ({ type: 'logout.backchannel'; providerId: string; logoutToken: string | null; mediaType: string } & Timestamped)
  | ({ type: 'logout.frontchannel'; providerId: string; iss: string | null; sid: string | null } & Timestamped)
  | EffectResult<'verifyLogoutToken', { jti: string; sid: string | null; sub: string | null }, 'invalid' | 'threw'>
  | EffectResult<'spendLogoutToken', null, 'replayed' | 'threw'>
  | EffectResult<'endProviderSessions', { ended: number }, 'threw'>
  | EffectResult<'findBrowserSession', null, 'invalid' | 'notThisSession' | 'threw'>
  | EffectResult<'endBrowserSession', null, 'threw'>

/** Tags: effect states and the resting state. */
export type LogoutTag =
  | 'awaitsRequest'
  | 'effect.verifyLogoutToken'
  | 'effect.spendLogoutToken'
  | 'effect.endProviderSessions'
  | 'effect.findBrowserSession'
  | 'effect.endBrowserSession'

/** The context a logout request starts from. */
export const initialContext: LogoutContext = {
  providerId: '',
  logoutToken: null,
  mediaType: '',
  jti: null,
  sid: null,
  sub: null,
  iss: null,
  refusal: null,
}

type Mapper = (args: { context: LogoutContext }) => FlowOutcome

const toLoggedOut: Mapper = () => ({ type: 'json', body: {}, cache: 'no-store' })
const toRefused: Mapper = ({ context }) => ({
  type: 'json',
  status: 400,
  cache: 'no-store',
  body: { error: 'invalid_request', error_description: context.refusal ?? 'invalid logout request' },
})
const toFailed: Mapper = () => ({
  type: 'json',
  status: 400,
  cache: 'no-store',
  body: { error: 'logout_failed', error_description: 'the sessions could not be ended; see the server log' },
})
const toFrontChannelPage =
  (ended: boolean, status = 200): Mapper =>
  () => ({ type: 'page', page: FRONT_CHANNEL_PAGE, data: { ended }, ...(status !== 200 ? { status } : {}) })
const toBrowserLoggedOut: Mapper = (args) => ({ ...toFrontChannelPage(true)(args), session: { op: 'clear' } })

type LogoutGuard = Guard<LogoutContext, LogoutEvent>
type LogoutAssignment = Assignment<LogoutContext, LogoutEvent>

/** The chart's guards. */
export const guards = {
  isRefusal: ({ event }) => {
    expectEvent(event, ['verifyLogoutToken.failed', 'findBrowserSession.failed'])
    return event.reason === 'invalid'
  },
  isReplay: ({ event }) => {
    expectEvent(event, 'spendLogoutToken.failed')
    return event.reason === 'replayed'
  },
  isAnotherSession: ({ event }) => {
    expectEvent(event, 'findBrowserSession.failed')
    return event.reason === 'notThisSession'
  },
} satisfies Record<string, LogoutGuard>

/** The chart's assignments. */
export const assignments = {
  rememberBackChannel: ({ event }) => {
    expectEvent(event, 'logout.backchannel')
    return { providerId: event.providerId, logoutToken: event.logoutToken, mediaType: event.mediaType }
  },
  rememberFrontChannel: ({ event }) => {
    expectEvent(event, 'logout.frontchannel')
    return { providerId: event.providerId, iss: event.iss, sid: event.sid }
  },
  rememberLogout: ({ event }) => {
    expectEvent(event, 'verifyLogoutToken.done')
    return { jti: event.output.jti, sid: event.output.sid, sub: event.output.sub, logoutToken: null }
  },
  recordRefusal: ({ event }) => {
    expectEvent(event, ['verifyLogoutToken.failed', 'findBrowserSession.failed'])
    return { refusal: event.code ?? null, logoutToken: null }
  },
  recordReplay: () => ({ refusal: 'the logout token was already used (jti)' }),
} satisfies Record<string, LogoutAssignment>

/** The chart's outputs: one function per answer, so the compiled chart names each. */
export const outputs = {
  finalStateOutcome,
  toLoggedOut,
  toRefused,
  toFailed,
  toBrowserLoggedOut,
  toFrontChannelUntouched: toFrontChannelPage(false),
  toFrontChannelRefused: toFrontChannelPage(false, 400),
}
