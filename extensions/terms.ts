/**
 * Terms acceptance, an application step shipped as an example of the extension API: before a
 * session is issued, a user who has not accepted the current version of the terms is shown them
 * and must accept (declining refuses the sign-in); accepting records the version. Every way of
 * signing in reaches it, and it cannot skip the second factor: it runs after the gate.
 *
 * @example
 * ```ts
 * import { termsExtension } from 'authchart/extensions/terms'
 *
 * const config = {
 *   extensions: [
 *     termsExtension({
 *       version: '2026-01',
 *       html: '<p>Be excellent to each other.</p>',
 *       acceptedVersion: (userId) => db.acceptedTerms(userId),
 *       recordAcceptance: (userId, version) => db.acceptTerms(userId, version),
 *     }),
 *   ],
 * }
 * ```
 *
 * @module
 */
import { object } from 'superstruct'
import { assertEvent } from 'xstate'
import { CONTINUE, DENY, denyBecause, toStepPage, type ExtensionPoint, type FlowExtension } from '../core/extensions.js'
import { defineExtension } from '../core/define-extension.js'
import { stepForm } from '../core/pages/steps.js'

/** Options of {@link termsExtension}. */
export interface TermsOptions {
  /** The current version; a user who accepted another one is asked again. */
  version: string
  /** The terms, as trusted HTML from the application (shown as given). */
  html: string
  /** The version a user last accepted, or `null`. */
  acceptedVersion: (userId: string) => Promise<string | null> | string | null
  /** Records that the user accepted `version`. */
  recordAcceptance: (userId: string, version: string) => Promise<void> | void
  /** Where in the sign-in it runs. Default `beforeSession` (every sign-in after the second factor). */
  at?: Extract<ExtensionPoint, 'beforeSession' | 'afterFirstSignIn'>
}

const userIdOf = (context: { user?: unknown }) => String((context.user as { id?: unknown } | null)?.id ?? '')

/** The terms step as an extension of the sign-in completion. */
export function termsExtension(options: TermsOptions): FlowExtension {
  return defineExtension({
    id: 'terms',
    version: '1',
    // At afterFirstSignIn, a new version of the terms is a new step: every user is asked again.
    stepVersion: options.version,
    at: options.at ?? 'beforeSession',
    initial: 'checkingTerms',
    guards: {
      hasAcceptedTerms: ({ event }: { event: { type: string; output?: { accepted?: boolean } } }) => {
        assertEvent(event, 'checkTerms.done')
        return event.output?.accepted === true
      },
    },
    states: {
      checkingTerms: {
        tags: 'effect.checkTerms',
        description: 'Looks up which version of the terms the user accepted.',
        on: {
          'checkTerms.done': [{ guard: 'hasAcceptedTerms', target: CONTINUE }, { target: 'awaitingTerms' }],
        },
      },
      awaitingTerms: {
        tags: 'awaitsRequest',
        description: 'Shows the current terms; waits for accept or decline (POST /step/signin-completion).',
        meta: {
          outcome: toStepPage,
          step: { page: 'terms', events: { 'terms.accept': object(), 'terms.decline': object() } },
        },
        on: { 'terms.accept': 'recordingAcceptance', 'terms.decline': denyBecause('declined') },
      },
      recordingAcceptance: {
        tags: 'effect.recordTerms',
        description: 'Records that the user accepted the current version.',
        on: { 'recordTerms.done': CONTINUE, 'recordTerms.failed': DENY },
      },
    },
    effects: {
      async checkTerms(context, ctx) {
        const accepted = await options.acceptedVersion(userIdOf(context))
        return { type: 'checkTerms.done', output: { accepted: accepted === options.version }, at: ctx.at }
      },
      async recordTerms(context, ctx) {
        try {
          await options.recordAcceptance(userIdOf(context), options.version)
          return { type: 'recordTerms.done', output: null, at: ctx.at }
        } catch (error) {
          ctx.logger.error(error instanceof Error ? error : new Error(String(error)))
          return { type: 'recordTerms.failed', reason: 'threw', at: ctx.at }
        }
      },
    },
    denials: {
      declined: 'You declined the terms of service, so you are not signed in. To use the site, sign in again and accept them.',
    },
    pages: {
      terms: (view) => ({
        title: 'Terms of service',
        html:
          `<h1>Terms of service</h1><div class="terms">${options.html}</div>` +
          stepForm(view, '', 'Accept', 'terms.accept') +
          stepForm(view, '', 'Decline', 'terms.decline', 'secondary'),
      }),
    },
  })
}
