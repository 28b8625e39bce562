import { nullable, object, size, string } from 'superstruct'
import { assign } from 'xstate'
import { CONTINUE, runs, stepForm, waitsFor, type AuthConfig } from 'authchart'
import { defineExtension } from 'authchart/extensions'
import { termsExtension } from 'authchart/extensions/terms'
import { adapter, config as database } from './database.js'

/** A new user picks the name others will see, before their first session. */
export const chooseName = defineExtension({
  id: 'choose-name',
  version: '1',
  at: 'afterFirstSignIn', // also: 'afterFirstFactor' (before the second factor), 'beforeSession'
  initial: 'askingName',
  context: { schema: { chosenName: nullable(string()) }, initial: { chosenName: null } },
  states: {
    // A page: GET /auth/step/signin-completion, answered by a CSRF-checked POST of one of its events.
    askingName: waitsFor('choose-name', {
      'name.submit': { input: object({ name: size(string(), 1, 40) }), target: 'savingName', actions: 'rememberName' },
    }),
    // I/O happens in effects, never in the chart. Leave through CONTINUE (or DENY), never to a core state.
    savingName: runs('saveName', { done: CONTINUE }),
  },
  actions: {
    // The property form: the fields an action writes are checked at load (never a core field).
    rememberName: assign({ chosenName: ({ event }: { event: { name?: string } }) => event.name ?? null }),
  },
  effects: {
    // Answers with its output, or fail(reason); a throw ends the sign-in with the error logged.
    async saveName(context) {
      await adapter.updateUser({ id: String(context.user?.id), name: context.chosenName })
      return null
    },
  },
  pages: {
    'choose-name': (view) => ({
      title: 'Choose a name',
      html: `<h1>Choose a name</h1>${stepForm(view, '<input name="name" required maxlength="40">', 'Continue')}`,
    }),
  },
})

const acceptedTerms = new Map<string, string>() // your database, in a real application

export const config = {
  ...database,
  extensions: [
    chooseName,
    termsExtension({
      version: '2026-01',
      html: '<p>Be excellent to each other.</p>',
      acceptedVersion: (userId) => acceptedTerms.get(userId) ?? null,
      recordAcceptance: (userId, version) => void acceptedTerms.set(userId, version),
      at: 'beforeSession', // every sign-in, after the second factor: asks again when the version changes
    }),
  ],
} satisfies AuthConfig
