import { nullable, object, size, string } from 'superstruct'
import { assign } from 'xstate'
import { CONTINUE, defineExtension, stepForm, toStepPage, type AuthConfig } from 'authchart'
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
    askingName: {
      tags: 'awaitsRequest', // a page: GET /auth/step/signin-completion, answered by a CSRF-checked POST
      meta: {
        outcome: toStepPage,
        step: { page: 'choose-name', events: { 'name.submit': object({ name: size(string(), 1, 40) }) } },
      },
      on: { 'name.submit': { target: 'savingName', actions: 'rememberName' } },
    },
    savingName: {
      tags: 'effect.saveName', // I/O happens in effects, never in the chart
      on: { 'saveName.done': CONTINUE }, // leave through CONTINUE (or DENY); never to a core state
    },
  },
  actions: {
    // The property form: the fields an action writes are checked at load (never a core field).
    rememberName: assign({ chosenName: ({ event }: { event: { name?: string } }) => event.name ?? null }),
  },
  effects: {
    async saveName(context, ctx) {
      await adapter.updateUser({ id: String(context.user?.id), name: context.chosenName as string })
      return { type: 'saveName.done', output: null, at: ctx.at }
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
