import { describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { decode, encode } from '../../core/jwt.js'
import {
  factorTimesOfSession,
  factorTimesOfToken,
  lastVerified,
  signInFactorTimes,
  withFactorVerified,
} from '../../core/session/verification.js'
import { Client, SECRET, testConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const good = { username: 'alice', password: 'wonderland' }

const readToken = (client: Client) =>
  decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })

describe('per-factor verification times', () => {
  it('records every factor of a sign-in at its time, a backup code as the one-time-code factor', () => {
    expect(signInFactorTimes(['pwd', 'backup'], 100)).toEqual({ pwd: 100, otp: 100 })
    expect(signInFactorTimes(['fed', 'unknown'], 7)).toEqual({ fed: 7 })
  })

  it('reads a token without the claim as proven at its auth_time by the factors its amr names', () => {
    expect(factorTimesOfToken({ auth_time: 50, amr: ['pwd', 'otp'] })).toEqual({ pwd: 50, otp: 50 })
  })

  it('reads a token without the claim or amr as proven at its auth_time by a first factor, never by a second', () => {
    const times = factorTimesOfToken({ auth_time: 50 })
    expect(lastVerified(times, ['pwd'])).toBe(50)
    expect(lastVerified(times, ['otp'])).toBeUndefined()
  })

  it('reads a token without the claim or a sign-in time (an Auth.js token) as never proven', () => {
    expect(factorTimesOfToken({ sub: 'u', iat: 10 })).toEqual({})
    expect(lastVerified(factorTimesOfToken({ sub: 'u', iat: 10 }))).toBeUndefined()
  })

  it('keeps only known factors with finite times from a claim it reads', () => {
    expect(factorTimesOfToken({ fva: { pwd: 9, otp: 'soon', admin: 1, hwk: Number.NaN, fed: -1 }, auth_time: 100 })).toEqual({ pwd: 9 })
    expect(factorTimesOfToken({ fva: ['pwd'], auth_time: 3 })).toEqual({ pwd: 3, hwk: 3, email: 3, fed: 3 })
  })

  it('reads a database session from its fva, else from its creation time and amr', () => {
    const base = { sessionToken: 't', userId: 'u', expires: new Date(0) }
    expect(factorTimesOfSession({ ...base, fva: { hwk: 5 } })).toEqual({ hwk: 5 })
    expect(factorTimesOfSession({ ...base, createdAt: new Date(8000), amr: ['pwd', 'otp'] })).toEqual({ pwd: 8, otp: 8 })
    expect(factorTimesOfSession(base)).toEqual({})
  })

  it('never moves a factor time backwards, and answers the latest of the accepted factors', () => {
    expect(withFactorVerified({ pwd: 10 }, 'pwd', 5)).toEqual({ pwd: 10 })
    expect(withFactorVerified({ pwd: 10 }, 'otp', 20)).toEqual({ pwd: 10, otp: 20 })
    expect(lastVerified({ pwd: 10, otp: 20 }, ['pwd', 'hwk'])).toBe(10)
    expect(lastVerified({ pwd: 10, otp: 20 })).toBe(20)
  })
})

describe('per-factor verification times in the session', () => {
  it('puts the sign-in factor and its time in a new JWT as the fva claim', async () => {
    const client = new Client(testConfig())
    await client.signIn(good)
    const token = await readToken(client)
    expect(token?.fva).toEqual({ pwd: expect.any(Number) })
    expect(Math.abs((token!.fva as { pwd: number }).pwd - Date.now() / 1000)).toBeLessThan(5)
  })

  it('keeps the fva claim when the session is read and the jwt callback rebuilds the token', async () => {
    const client = new Client(
      testConfig({ callbacks: { jwt: ({ token }) => ({ sub: token.sub, name: token.name, email: token.email }) } }),
    )
    await client.signIn(good)
    const before = (await readToken(client))!.fva
    const { response } = await client.session()
    expect(response.status).toBe(200)
    expect((await readToken(client))!.fva).toEqual(before)
  })

  it('keeps the fva claim out of reach of a jwt callback at sign-in (the engine adds it after)', async () => {
    const client = new Client(testConfig({ callbacks: { jwt: () => ({ sub: 'u-1', fva: { hwk: 1 } }) } }))
    await client.signIn(good)
    expect((await readToken(client))!.fva).toEqual({ pwd: expect.any(Number) })
  })

  it('stores the sign-in factor with a new database session row', async () => {
    const store = createMemoryStore()
    const client = new Client(testConfig({ adapter: MemoryAdapter(store) }))
    await client.signIn(good)
    const row = store.sessions.get(client.jar.get(SESSION_COOKIE)!)
    expect(row?.fva).toEqual({ pwd: expect.any(Number) })
    expect(factorTimesOfSession(row!)).toEqual(row!.fva)
  })

  it('reads an old token sealed by the same secret without the claim as never proven, still a live session', async () => {
    const client = new Client(testConfig())
    const old = await encode({ token: { sub: 'u-1', name: 'Alice', email: 'alice@example.com' }, secret: SECRET, salt: SESSION_COOKIE })
    client.jar.store(new Response(null, { headers: { 'set-cookie': `${SESSION_COOKIE}=${old}; Path=/` } }))
    const { body } = await client.session()
    expect(body).toMatchObject({ user: { email: 'alice@example.com' } })
    expect(factorTimesOfToken((await readToken(client))!)).toEqual({})
  })
})

describe('per-factor verification times of a token given its sign-in time at a read', () => {
  it('counts an Auth.js token stamped with auth_time at its first read as never proven', async () => {
    const client = new Client(testConfig({ session: { absoluteMaxAge: 3600 } }))
    const old = await encode({ token: { sub: 'u-1', name: 'Alice', email: 'alice@example.com' }, secret: SECRET, salt: SESSION_COOKIE })
    client.jar.store(new Response(null, { headers: { 'set-cookie': `${SESSION_COOKIE}=${old}; Path=/` } }))
    await client.session()
    const token = (await readToken(client))!
    expect(token.auth_time).toEqual(expect.any(Number))
    expect(factorTimesOfToken(token)).toEqual({})
  })
})
