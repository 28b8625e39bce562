/**
 * Second, independent tests for the wiring of an application's extensions (core/extensions.ts),
 * through credentials sign-ins on the memory adapter: which sentence a denial code finds, the
 * states `runs` and `waitsFor` write, how an effect's answer (its output, nothing, a whole result
 * event, a failure with what it tells) reaches the extension's transitions, and an effect state
 * carrying metadata of its own.
 */
import { nullable, object, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { assign } from 'xstate'
import { CONTINUE, DENY, denialSentence, denyBecause, runs, waitsFor, type ExtensionEvent, type FlowExtension } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { Client, ORIGIN, testConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'

/** An extension with `id` whose one effect state denies for `reason`, explained by `sentence`. */
function denying(id: string, reason: string, sentence: string): FlowExtension {
  return defineExtension({
    id,
    version: '1',
    at: 'beforeSession',
    initial: `${id}-checking`,
    states: { [`${id}-checking`]: { tags: `effect.${id}-check`, on: { [`${id}-check.done`]: denyBecause(reason) } } },
    effects: { [`${id}-check`]: () => null },
    denials: { [reason]: sentence },
  } as never)
}

describe('the sentence of a denial code', () => {
  const extensions = [denying('age', 'too-young', 'You must be 18.'), denying('terms', 'declined', 'You declined the terms.')]

  it('is the one its extension gives for its reason, whichever extension comes first', () => {
    expect(denialSentence(extensions, 'terms.declined')).toBe('You declined the terms.')
    expect(denialSentence(extensions, 'age.too-young')).toBe('You must be 18.')
  })

  it('is none for a code naming an extension that is not deployed, even with a reason another one explains', () => {
    expect(denialSentence(extensions, 'other.too-young')).toBeUndefined()
    expect(denialSentence(extensions, 'terms.too-young')).toBeUndefined()
  })

  it('is none for a code without an extension id before a dot', () => {
    const shortId = [denying('age', 'aged', 'Too old.')]
    // "aged" is the reason of "age", but the code must name the extension: <id>.<reason>.
    expect(denialSentence(shortId, 'aged')).toBeUndefined()
    expect(denialSentence(shortId, 'age.aged')).toBe('Too old.')
  })
})

describe('the states runs and waitsFor write', () => {
  it('carry a description only when one is given', () => {
    expect(runs('save', { done: CONTINUE })).toStrictEqual({ tags: 'effect.save', on: { 'save.done': CONTINUE } })
    expect(runs('save', { done: CONTINUE }, 'Saves the name')).toStrictEqual({
      tags: 'effect.save',
      description: 'Saves the name',
      on: { 'save.done': CONTINUE },
    })
    const answers = { 'name.submit': { target: CONTINUE } }
    expect(waitsFor('choose-name', answers)).not.toHaveProperty('description')
    expect(waitsFor('choose-name', answers, 'Asks for a name')).toMatchObject({
      description: 'Asks for a name',
      tags: 'awaitsRequest',
      meta: { step: { page: 'choose-name' } },
      on: { 'name.submit': { target: CONTINUE } },
    })
  })
})

/** Signs in with the password through `extension`: where the browser is sent, and whether it has a session. */
async function signInThrough(extension: FlowExtension) {
  const config = testConfig({ extensions: [extension] })
  const client = new Client(config)
  const response = await client.signIn({ username: 'alice', password: 'wonderland' })
  return { status: response.status, location: response.headers.get('location'), session: client.jar.get(SESSION_COOKIE) !== undefined, config }
}

/** An extension whose effect `lookup` answers with `answer`; its `lookup.done` and `lookup.failed` transitions as given. */
function answering(answer: () => unknown, on: Record<string, unknown>, overrides: Record<string, unknown> = {}): FlowExtension {
  return defineExtension({
    id: 'lookup',
    version: '1',
    at: 'beforeSession',
    initial: 'looking',
    states: { looking: { tags: 'effect.lookup', on } },
    effects: { lookup: answer },
    ...overrides,
  } as never)
}

describe("an extension effect's answer", () => {
  const greeted = { guards: { greeted: ({ event }: { event: ExtensionEvent }) => event.output?.greeting === 'hi' } }
  const onGreeting = { 'lookup.done': [{ guard: 'greeted', target: CONTINUE }, denyBecause('no-greeting')] }

  it('given at once as nothing goes on to the session', async () => {
    for (const nothing of [undefined, null]) {
      const signedIn = await signInThrough(answering(() => nothing, { 'lookup.done': CONTINUE, 'lookup.failed': DENY }))
      expect(signedIn).toMatchObject({ location: ORIGIN, session: true })
    }
  })

  it('given as its output (an object) reaches the done transition as the output', async () => {
    for (const answer of [() => ({ greeting: 'hi' }), async () => ({ greeting: 'hi' })]) {
      expect(await signInThrough(answering(answer, onGreeting, greeted))).toMatchObject({ location: ORIGIN, session: true })
    }
    const other = await signInThrough(answering(() => ({ greeting: 'hello' }), onGreeting, greeted))
    expect(other).toMatchObject({ location: `${ORIGIN}/auth/error?error=AccessDenied&code=lookup.no-greeting`, session: false })
  })

  it('given as the whole done event reaches the done transition with its output', async () => {
    const event = { type: 'lookup.done', output: { greeting: 'hi' }, at: 0 }
    expect(await signInThrough(answering(() => event, onGreeting, greeted))).toMatchObject({ location: ORIGIN, session: true })
  })

  /** A failed event told everything: its reason, error, code and retry time reach the failed transition. */
  const toldEverything = {
    guards: {
      toldEverything: ({ event }: { event: ExtensionEvent }) =>
        event.type === 'lookup.failed' && event.reason === 'busy' && event.error === 'AccessDenied' && event.code === 'E1' && event.retryAfter === 30,
    },
  }
  const onFailure = { 'lookup.done': CONTINUE, 'lookup.failed': [{ guard: 'toldEverything', target: denyBecause('busy') }, DENY] }

  it('given as the whole failed event takes the failed transition with what the event tells', async () => {
    const failed = { type: 'lookup.failed', reason: 'busy', error: 'AccessDenied', code: 'E1', retryAfter: 30 }
    for (const answer of [() => failed, async () => failed]) {
      expect(await signInThrough(answering(answer, onFailure, toldEverything))).toMatchObject({
        location: `${ORIGIN}/auth/error?error=AccessDenied&code=lookup.busy`,
        session: false,
      })
    }
  })

  it('given as a failed event telling only a reason takes the failed transition, and tells nothing else', async () => {
    const told: Record<string, unknown>[] = []
    const extension = answering(() => ({ type: 'lookup.failed', reason: 404 }), {
      'lookup.done': CONTINUE,
      'lookup.failed': { target: DENY, actions: 'note' },
    }, {
      context: { schema: { noted: nullable(string()) }, initial: { noted: null } },
      actions: {
        note: assign({
          noted: ({ event }: { event: ExtensionEvent }) => {
            told.push(event)
            return null
          },
        }),
      },
    })
    expect(await signInThrough(extension)).toMatchObject({ location: `${ORIGIN}/auth/error?error=AccessDenied`, session: false })
    expect(told).toHaveLength(1)
    // The reason as text; nothing the effect did not tell.
    expect(told[0]).toMatchObject({ type: 'lookup.failed', reason: '404' })
    expect(Object.keys(told[0]!).sort()).toEqual(['at', 'reason', 'type'])
  })
})

describe('an effect state with metadata of its own', () => {
  it('is accepted and runs (only waiting states name a page)', async () => {
    const extension = answering(() => null, { 'lookup.done': CONTINUE }, {
      states: { looking: { tags: 'effect.lookup', meta: { audit: 'looks the user up' }, on: { 'lookup.done': CONTINUE } } },
    })
    expect(await signInThrough(extension)).toMatchObject({ location: ORIGIN, session: true })
  })

  it('next to a waiting state still needs the page that state names', async () => {
    const extension = defineExtension({
      id: 'ask',
      version: '1',
      at: 'beforeSession',
      initial: 'looking',
      states: {
        looking: { tags: 'effect.lookup', meta: { audit: 'first' }, on: { 'lookup.done': 'asking' } },
        asking: { tags: 'awaitsRequest', meta: { step: { page: 'ask-page', events: { 'ask.go': object() } } }, on: { 'ask.go': CONTINUE } },
      },
      effects: { lookup: () => null },
    } as never)
    const { status, session, config } = await signInThrough(extension)
    expect(session).toBe(false)
    expect(status).toBe(500)
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining('no extension renders the page "ask-page"') }))
  })
})
