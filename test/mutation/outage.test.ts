/**
 * `core/outage.ts` at the module, one case per rule: each network code, SQLSTATE, Prisma code and
 * driver message that makes a failure an outage (and the near misses that do not), how deep a
 * wrapped cause is looked for, the cause named in the 503's message, and which deadline a call gets.
 * An outage misread as a bug is a 500; a bug misread as an outage is a 503 that hides it.
 */
import { describe, expect, it } from 'vitest'
import { ServiceUnavailable } from '../../core/errors.js'
import { DEFAULT_AVAILABILITY, isOutageError, markReported, outageOf, wasReported, withDeadline } from '../../core/outage.js'

const coded = (code: unknown) => Object.assign(new Error('failed'), { code })
const wrapped = (error: unknown, levels: number): unknown => (levels === 0 ? error : wrapped(new Error('wrapper', { cause: error }), levels - 1))
const never = () => new Promise<never>(() => {})
const unavailable = () => new ServiceUnavailable('store', 'the store is down', 3)

describe('the defaults', () => {
  it('gives an adapter call 5 s, a store call 2 s, and asks a client to retry after 5 s', () => {
    expect(DEFAULT_AVAILABILITY).toEqual({ adapterTimeout: 5000, storeTimeout: 2000, retryAfter: 5, isOutage: isOutageError })
    expect(Object.isFrozen(DEFAULT_AVAILABILITY)).toBe(true)
  })
})

describe('which codes are an outage', () => {
  it.each(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])(
    'counts the socket or DNS code %s',
    (code) => expect(isOutageError(coded(code))).toBe(true),
  )

  it.each(['08000', '08003', '08006', '08P01', '53300', '57P01', '57P02', '57P03', '57014', '40001', '40P01'])('counts the SQLSTATE %s', (code) =>
    expect(isOutageError(coded(code))).toBe(true),
  )

  it.each(['0800', '080000', 'x08000', '53301', '57P04', '57P00', '57015', '40002', '40P02', '23505', '42601'])('does not count the SQLSTATE %s', (code) =>
    expect(isOutageError(coded(code))).toBe(false),
  )

  it.each(['P1001', 'P1002', 'P1008', 'P1017', 'P2024'])('counts the Prisma code %s', (code) => expect(isOutageError(coded(code))).toBe(true))

  it('counts ERR_UNAVAILABLE, and no code that is not a string', () => {
    expect(isOutageError(coded('ERR_UNAVAILABLE'))).toBe(true)
    expect(isOutageError(coded(57014))).toBe(false)
    expect(isOutageError(coded(['ECONNREFUSED']))).toBe(false)
    expect(isOutageError(coded('P2002'))).toBe(false)
  })

  it('counts the error names of ioredis giving up and Prisma failing to connect, and no other', () => {
    const named = (name: string) => Object.assign(new Error('failed'), { name })
    expect(isOutageError(named('MaxRetriesPerRequestError'))).toBe(true)
    expect(isOutageError(named('PrismaClientInitializationError'))).toBe(true)
    expect(isOutageError(named('PrismaClientKnownRequestError'))).toBe(false)
  })

  it('counts a ServiceUnavailable as it is', () => {
    expect(isOutageError(unavailable())).toBe(true)
  })
})

describe('which messages are an outage', () => {
  it.each([
    'Connection terminated unexpectedly',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
    'Connection is closed.',
    "Stream isn't writeable and enableOfflineQueue options is false",
    'Reached the max retries per request limit (which is 20)',
    'Redis connection is not ready',
    'the database system is starting up',
    'the database system is shutting down',
    'the database system is in recovery mode',
    'CONNECTION TERMINATED',
  ])('counts "%s"', (message) => expect(isOutageError(new Error(message))).toBe(true))

  it.each(['the database system is ready', 'Connection refused by policy', 'duplicate key value', ''])('does not count "%s"', (message) =>
    expect(isOutageError(new Error(message))).toBe(false),
  )

  it('reads a message only when it is a string', () => {
    expect(isOutageError({ message: ['Connection terminated'] })).toBe(false)
  })
})

describe('the causes an error wraps', () => {
  it('finds an outage up to four causes deep, and not deeper', () => {
    expect(isOutageError(wrapped(coded('ECONNRESET'), 4))).toBe(true)
    expect(isOutageError(wrapped(coded('ECONNRESET'), 5))).toBe(false)
    expect(outageOf(wrapped(unavailable(), 4))).toBeInstanceOf(ServiceUnavailable)
    expect(outageOf(wrapped(unavailable(), 5))).toBeUndefined()
  })

  it("finds it in the cause and in an Auth.js error's cause.err, whichever holds it", () => {
    const authjs = (err: unknown, cause: object = {}) => new Error('AdapterError', { cause: Object.assign(cause, { err }) })
    expect(isOutageError(authjs(coded('ECONNRESET')))).toBe(true)
    expect(isOutageError(authjs(new Error('a bug'), coded('ECONNRESET')))).toBe(true)
    expect(isOutageError(authjs(undefined, coded('ECONNRESET')))).toBe(true)
    const found = unavailable()
    expect(outageOf(authjs(found))).toBe(found)
    expect(outageOf(authjs(new Error('a bug'), found))).toBe(found)
    expect(outageOf(new Error('wrapper', { cause: null }))).toBeUndefined()
    expect(isOutageError(new Error('wrapper', { cause: null }))).toBe(false)
  })

  it('finds nothing in what is no object', () => {
    for (const value of [null, undefined, 'ECONNREFUSED', 503]) {
      expect(isOutageError(value)).toBe(false)
      expect(outageOf(value)).toBeUndefined()
    }
    expect(outageOf(new Error('a bug'))).toBeUndefined()
  })
})

describe('an outage logged once', () => {
  it('knows the outages marked as logged, and only those', () => {
    const logged = unavailable()
    markReported(logged)
    expect(wasReported(logged)).toBe(true)
    expect(wasReported(unavailable())).toBe(false)
  })
})

describe('the cause a 503 names', () => {
  const availability = { ...DEFAULT_AVAILABILITY, retryAfter: 9 }
  const failing = (error: unknown, options = availability) => withDeadline('store', 'get', options, () => Promise.reject(error)).catch((e: unknown) => e)

  it("names the first line of the cause's message, and its code unless the message has it", async () => {
    expect(await failing(Object.assign(new Error('socket gone\nat line 2'), { code: 'ECONNRESET' }))).toMatchObject({
      message: 'the store is unavailable (get): socket gone (ECONNRESET)',
      retryAfter: 9,
      part: 'store',
    })
    expect(await failing(Object.assign(new Error(''), { name: 'MaxRetriesPerRequestError' }))).toMatchObject({
      message: 'the store is unavailable (get): MaxRetriesPerRequestError',
    })
    expect(await failing(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toMatchObject({
      message: 'the store is unavailable (get): read ECONNRESET',
    })
  })

  it('names a cause that is no Error by its text, as an outage check of the application says it is one', async () => {
    const failure = await failing('the link is down', { ...availability, isOutage: () => true })
    expect(failure).toBeInstanceOf(ServiceUnavailable)
    expect((failure as Error).message).toBe('the store is unavailable (get): the link is down')
  })

  it('passes a ServiceUnavailable on as it is, whatever the outage check says', async () => {
    const outage = unavailable()
    expect(await failing(outage, { ...availability, isOutage: () => true })).toBe(outage)
  })
})

describe('which deadline a call gets', () => {
  it('gives an adapter call the adapter timeout and a store call the store timeout, with the retry delay', async () => {
    const availability = { ...DEFAULT_AVAILABILITY, adapterTimeout: 30, storeTimeout: 60, retryAfter: 4 }
    const adapter = await withDeadline('adapter', 'getUser', availability, never).catch((e: unknown) => e)
    const store = await withDeadline('store', 'claim', availability, never).catch((e: unknown) => e)
    expect(adapter).toMatchObject({ part: 'adapter', retryAfter: 4, message: 'the adapter did not answer getUser within 30 ms' })
    expect(store).toMatchObject({ part: 'store', retryAfter: 4, message: 'the store did not answer claim within 60 ms' })
  })
})
