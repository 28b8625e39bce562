/**
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
import { assertEvent, assign, setup } from 'xstate'
import type { EffectResult, Timestamped } from './shared/events.js'
import { finalStateOutcome, type FlowOutcome } from './shared/outcome.js'

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

const initialContext: LogoutContext = {
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

/** The logout machine. */
export const logoutMachine = setup({
  types: {} as { context: LogoutContext; events: LogoutEvent; tags: LogoutTag },
  guards: {
    isRefusal: ({ event }) => {
      assertEvent(event, ['verifyLogoutToken.failed', 'findBrowserSession.failed'])
      return event.reason === 'invalid'
    },
    isReplay: ({ event }) => {
      assertEvent(event, 'spendLogoutToken.failed')
      return event.reason === 'replayed'
    },
    isAnotherSession: ({ event }) => {
      assertEvent(event, 'findBrowserSession.failed')
      return event.reason === 'notThisSession'
    },
  },
  actions: {
    rememberBackChannel: assign(({ event }) => {
      assertEvent(event, 'logout.backchannel')
      return { providerId: event.providerId, logoutToken: event.logoutToken, mediaType: event.mediaType }
    }),
    rememberFrontChannel: assign(({ event }) => {
      assertEvent(event, 'logout.frontchannel')
      return { providerId: event.providerId, iss: event.iss, sid: event.sid }
    }),
    rememberLogout: assign(({ event }) => {
      assertEvent(event, 'verifyLogoutToken.done')
      return { jti: event.output.jti, sid: event.output.sid, sub: event.output.sub, logoutToken: null }
    }),
    recordRefusal: assign(({ event }) => {
      assertEvent(event, ['verifyLogoutToken.failed', 'findBrowserSession.failed'])
      return { refusal: event.code ?? null, logoutToken: null }
    }),
    recordReplay: assign({ refusal: 'the logout token was already used (jti)' }),
  },
}).createMachine({
  id: LOGOUT,
  version: '1',
  description: 'Logout by the provider: its back- and front-channel requests end our sessions signed in through it.',
  initial: 'idle',
  context: initialContext,
  output: finalStateOutcome,
  states: {
    idle: {
      tags: 'awaitsRequest',
      description:
        'The provider posts a Logout Token (POST /backchannel-logout/:provider), or loads the front-channel page in the browser (GET /frontchannel-logout/:provider).',
      on: {
        'logout.backchannel': { target: 'verifyingLogoutToken', actions: 'rememberBackChannel' },
        'logout.frontchannel': { target: 'findingBrowserSession', actions: 'rememberFrontChannel' },
      },
    },
    verifyingLogoutToken: {
      tags: 'effect.verifyLogoutToken',
      description:
        "Checks the form post and the Logout Token: signature (the provider's keys, refetched on an unknown kid), iss, aud, iat, typ, events, no nonce, sid or sub.",
      on: {
        'verifyLogoutToken.done': { target: 'spendingLogoutToken', actions: 'rememberLogout' },
        'verifyLogoutToken.failed': [
          { guard: 'isRefusal', target: 'refused', actions: 'recordRefusal' },
          { target: 'failed' },
        ],
      },
    },
    spendingLogoutToken: {
      tags: 'effect.spendLogoutToken',
      description: "Spends the token's jti once in the store: a replayed token ends nothing.",
      on: {
        'spendLogoutToken.done': { target: 'endingProviderSessions' },
        'spendLogoutToken.failed': [
          { guard: 'isReplay', target: 'refused', actions: 'recordReplay' },
          { target: 'failed' },
        ],
      },
    },
    endingProviderSessions: {
      tags: 'effect.endProviderSessions',
      description:
        'Ends every session of ours signed in through that provider session (sid), or all of its subject (sub): rows deleted, JWT sessions refused from now on.',
      on: {
        'endProviderSessions.done': { target: 'loggedOut' },
        'endProviderSessions.failed': { target: 'failed' },
      },
    },
    findingBrowserSession: {
      tags: 'effect.findBrowserSession',
      description: "Checks iss is the provider's and reads this browser's session: was it signed in through that sid?",
      on: {
        'findBrowserSession.done': { target: 'endingBrowserSession' },
        'findBrowserSession.failed': [
          { guard: 'isAnotherSession', target: 'notThisSession' },
          { guard: 'isRefusal', target: 'frontChannelRefused', actions: 'recordRefusal' },
          { target: 'frontChannelFailed' },
        ],
      },
    },
    endingBrowserSession: {
      tags: 'effect.endBrowserSession',
      description: "Ends this browser's session: its row deleted, or its provider session refused from now on (with a store).",
      on: {
        'endBrowserSession.done': { target: 'browserLoggedOut' },
        'endBrowserSession.failed': { target: 'frontChannelFailed' },
      },
    },
    loggedOut: {
      type: 'final',
      description: 'Back-channel: the sessions are ended (or there were none): 200, no-store.',
      output: toLoggedOut,
    },
    refused: {
      type: 'final',
      description: 'Back-channel: a bad request or Logout Token, or a replayed one: 400 with a JSON error; no session touched.',
      output: toRefused,
    },
    failed: {
      type: 'final',
      description: 'Back-channel: the provider, the store or the database failed: 400 with a JSON error (the provider may retry).',
      output: toFailed,
    },
    browserLoggedOut: {
      type: 'final',
      description: "Front-channel: this browser's session is over; the session cookie is cleared.",
      output: toBrowserLoggedOut,
    },
    notThisSession: {
      type: 'final',
      description: 'Front-channel: no session here, or one signed in otherwise: nothing ends.',
      output: toFrontChannelPage(false),
    },
    frontChannelRefused: {
      type: 'final',
      description: "Front-channel: iss or sid missing, or iss not the provider's: 400, nothing ends.",
      output: toFrontChannelPage(false, 400),
    },
    frontChannelFailed: {
      type: 'final',
      description: 'Front-channel: the provider, the store or the database failed: 400, the session is left as it was.',
      output: toFrontChannelPage(false, 400),
    },
  },
})
