/**
 * The typed extension API (issue 27 item 5): `defineExtension` knows the names of an extension's
 * states, effects, guards and actions, and the types of its context fields, as xstate's `setup()`
 * does; `runs` and `waitsFor` write a state's tag, result events and step events from one name;
 * an effect answers with its output or `fail(reason)`. The `@ts-expect-error` lines are checked by
 * `npm run typecheck`: each one fails the type check the day the mistake it shows is accepted.
 */
import { nullable, number, object, string } from 'superstruct'
import { describe, expect, it } from 'vitest'
import { assign } from 'xstate'
import { assertConfig } from '../../core/index.js'
import { CONTINUE, DENY, denyBecause, fail, runs, waitsFor, type FlowExtension } from '../../core/extensions.js'
import { defineExtension } from '../../core/define-extension.js'
import { stepForm } from '../../core/pages/steps.js'
import { Client, ORIGIN, featureConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const STEP = '/step/signin-completion'

/** An age check: asks for a birth year, refuses the too young, remembers the answer. */
function ageCheck(record: (year: number) => void | Promise<void>): FlowExtension {
  return defineExtension({
    id: 'age',
    version: '1',
    at: 'beforeSession',
    initial: 'askingYear',
    context: { schema: { birthYear: nullable(number()) }, initial: { birthYear: null } },
    states: {
      askingYear: waitsFor('age', {
        'age.submit': { input: object({ year: string() }), target: 'recordingYear', actions: 'rememberYear' },
        'age.skip': { target: DENY },
      }),
      recordingYear: runs('recordYear', { done: CONTINUE, failed: denyBecause('too-young') }),
    },
    actions: {
      rememberYear: assign({ birthYear: ({ event }: { event: { year?: string } }) => Number(event.year) }),
    },
    effects: {
      async recordYear(context) {
        // Typed from the schema: number | null.
        const year: number | null = context.birthYear
        if (year === null || year > 2008) return fail('too-young')
        await record(year)
        return null
      },
    },
    pages: { age: (view) => ({ title: 'Your age', html: stepForm(view, '<input name="year">', 'Go on', 'age.submit') }) },
    denials: { 'too-young': 'You must be 18 or older to sign in here.' },
  })
}

async function answerYear(client: Client, year: string): Promise<Response> {
  return client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), event: 'age.submit', year } })
}

describe('an extension written with runs, waitsFor and an effect that answers with its output', () => {
  it('waits on its page, runs its effect and goes on', async () => {
    const recorded: number[] = []
    const client = new Client(featureConfig({ extensions: [ageCheck((year) => void recorded.push(year))] }))
    expect((await client.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(await (await client.send({ path: STEP })).text()).toContain('name="year"')
    expect((await answerYear(client, '1990')).headers.get('location')).toBe(ORIGIN)
    expect(recorded).toEqual([1990])
    expect(client.jar.get(SESSION_COOKIE)).toBeDefined()
  })

  it('refuses with the reason its effect failed for', async () => {
    const client = new Client(featureConfig({ extensions: [ageCheck(() => {})] }))
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect((await answerYear(client, '2015')).headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied&code=age.too-young`)
    expect(client.jar.get(SESSION_COOKIE)).toBeUndefined()
  })

  it('ends the sign-in on its failure transition when its effect throws, the error logged', async () => {
    const config = featureConfig({
      extensions: [
        ageCheck(() => {
          throw new Error('the database is down')
        }),
      ],
    })
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    expect((await answerYear(client, '1990')).headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied&code=age.too-young`)
    expect(config.logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ name: 'CallbackRouteError', cause: { err: expect.objectContaining({ message: 'the database is down' }) } }),
    )
  })

  it('writes the same chart as the long form', () => {
    expect(runs('recordYear', { done: CONTINUE, failed: DENY }, 'Records the year.')).toEqual({
      tags: 'effect.recordYear',
      description: 'Records the year.',
      on: { 'recordYear.done': CONTINUE, 'recordYear.failed': DENY },
    })
    const year = object({ year: string() })
    const waiting = waitsFor('age', { 'age.submit': { input: year, target: 'recordingYear' }, 'age.skip': { target: DENY } })
    expect(waiting.tags).toBe('awaitsRequest')
    expect(waiting.meta.step.page).toBe('age')
    expect(waiting.meta.step.events['age.submit']).toBe(year)
    expect(waiting.meta.step.events['age.skip']!.is({})).toBe(true)
    expect(waiting.on).toEqual({ 'age.submit': { target: 'recordingYear' }, 'age.skip': { target: DENY } })
  })

  it('keeps the long form working: an effect answering with its whole result event', async () => {
    const ran: string[] = []
    const longForm = defineExtension({
      id: 'long',
      version: '1',
      at: 'beforeSession',
      initial: 'checking',
      states: { checking: { tags: 'effect.check', on: { 'check.done': CONTINUE, 'check.failed': DENY } } },
      effects: {
        check: async (_context, env) => {
          ran.push('check')
          return { type: 'check.done', output: null, at: env.at }
        },
      },
    })
    const client = new Client(featureConfig({ extensions: [longForm] }))
    expect((await client.signIn({ username: 'alice', password: 'wonderland' })).headers.get('location')).toBe(ORIGIN)
    expect(ran).toEqual(['check'])
  })
})

describe('defineExtension types', () => {
  it('refuses, at compile time, names that are not the extension\'s own', () => {
    const base = { id: 'typed', version: '1', at: 'beforeSession' } as const
    const mistakes = [
      defineExtension({
        ...base,
        // @ts-expect-error: the initial state is not one of its states
        initial: 'nowhere',
        states: { checking: runs('check', { done: CONTINUE }) },
        effects: { check: () => null },
      }),
      defineExtension({
        ...base,
        initial: 'checking',
        // @ts-expect-error: a target that is neither one of its states, CONTINUE nor DENY
        states: { checking: runs('check', { done: 'issuingSession' }) },
        effects: { check: () => null },
      }),
      defineExtension({
        ...base,
        initial: 'checking',
        // @ts-expect-error: a tag naming an effect it does not implement
        states: { checking: runs('chekc', { done: CONTINUE }) },
        effects: { check: () => null },
      }),
      defineExtension({
        ...base,
        initial: 'asking',
        states: {
          // @ts-expect-error: an action it does not declare
          asking: waitsFor('p', { 'x.go': { target: CONTINUE, actions: 'rememberX' } }),
        },
        actions: { remember: assign({}) },
      }),
    ]
    // Each would be refused at load too: the types catch them before.
    for (const mistake of mistakes) expect(() => assertConfig(featureConfig({ extensions: [mistake] }))).toThrow()
  })

  it('types its effects\' context from its schema: a mistake only the types can catch', () => {
    const misread = defineExtension({
      ...({ id: 'typed', version: '1', at: 'beforeSession' } as const),
      initial: 'checking',
      context: { schema: { count: number() }, initial: { count: 0 } },
      states: { checking: runs('check', { done: CONTINUE }) },
      effects: {
        check: (context) => {
          // @ts-expect-error: its field is a number
          const text: string = context.count
          return text
        },
      },
    })
    expect(() => assertConfig(featureConfig({ extensions: [misread] }))).not.toThrow()
  })
})
