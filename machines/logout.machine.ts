/**
 * Logout by the provider: the OpenID Connect provider ends the user's session there and tells us,
 * so our sessions signed in through it end too (back- and front-channel; see `logout.logic.ts`,
 * the chart's logic). This is the notation the diagrams, the model-based tests and the chart
 * compiler read (the engine runs the compiled chart, `core/charts/logout.ts`).
 *
 * @module
 */
import { assign, setup } from 'xstate'
import {
  assignments,
  guards,
  initialContext,
  LOGOUT,
  outputs,
  type LogoutContext,
  type LogoutEvent,
  type LogoutTag,
} from './logout.logic.js'

export { FRONT_CHANNEL_PAGE, LOGOUT, LogoutContext, type LogoutEvent, type LogoutTag } from './logout.logic.js'

/** The logout machine. */
export const logoutMachine = setup({
  types: {} as { context: LogoutContext; events: LogoutEvent; tags: LogoutTag },
  guards,
  actions: {
    rememberBackChannel: assign(assignments.rememberBackChannel),
    rememberFrontChannel: assign(assignments.rememberFrontChannel),
    rememberLogout: assign(assignments.rememberLogout),
    recordRefusal: assign(assignments.recordRefusal),
    recordReplay: assign(assignments.recordReplay),
  },
}).createMachine({
  id: LOGOUT,
  version: '1',
  description: 'Logout by the provider: its back- and front-channel requests end our sessions signed in through it.',
  initial: 'idle',
  context: initialContext,
  output: outputs.finalStateOutcome,
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
      output: outputs.toLoggedOut,
    },
    refused: {
      type: 'final',
      description: 'Back-channel: a bad request or Logout Token, or a replayed one: 400 with a JSON error; no session touched.',
      output: outputs.toRefused,
    },
    failed: {
      type: 'final',
      description: 'Back-channel: the provider, the store or the database failed: 400 with a JSON error (the provider may retry).',
      output: outputs.toFailed,
    },
    browserLoggedOut: {
      type: 'final',
      description: "Front-channel: this browser's session is over; the session cookie is cleared.",
      output: outputs.toBrowserLoggedOut,
    },
    notThisSession: {
      type: 'final',
      description: 'Front-channel: no session here, or one signed in otherwise: nothing ends.',
      output: outputs.toFrontChannelUntouched,
    },
    frontChannelRefused: {
      type: 'final',
      description: "Front-channel: iss or sid missing, or iss not the provider's: 400, nothing ends.",
      output: outputs.toFrontChannelRefused,
    },
    frontChannelFailed: {
      type: 'final',
      description: 'Front-channel: the provider, the store or the database failed: 400, the session is left as it was.',
      output: outputs.toFrontChannelRefused,
    },
  },
})
