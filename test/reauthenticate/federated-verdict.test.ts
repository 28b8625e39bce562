/**
 * The check of a provider's answer to a re-authentication, at unit level (the attacks run through
 * `Auth` against the real provider in `federated.test.ts`): the ID token proves a new login only
 * with an `auth_time` no older than the request (a clock tolerance of 30 seconds, oauth4webapi's),
 * and only for the signed-in user's own account at the provider.
 */
import { describe, expect, it } from 'vitest'
import { AUTH_TIME_TOLERANCE, federatedVerdict } from '../../core/flows/reauthenticate/federated.js'

const REQUESTED_AT = 1_800_000_000
const ALICE = ['alice-at-op']

describe('federatedVerdict', () => {
  it('accepts a login at or after the request by the user’s own account', () => {
    expect(federatedVerdict({ sub: 'alice-at-op', auth_time: REQUESTED_AT }, REQUESTED_AT, ALICE)).toBe('proven')
    expect(federatedVerdict({ sub: 'alice-at-op', auth_time: REQUESTED_AT + 40 }, REQUESTED_AT, ALICE)).toBe('proven')
    // One of several accounts of the user at the provider.
    expect(federatedVerdict({ sub: 'alice-2', auth_time: REQUESTED_AT }, REQUESTED_AT, ['alice-1', 'alice-2'])).toBe('proven')
  })

  it('tolerates a provider clock up to 30 seconds behind, and no more', () => {
    expect(AUTH_TIME_TOLERANCE).toBe(30)
    expect(federatedVerdict({ sub: 'alice-at-op', auth_time: REQUESTED_AT - 30 }, REQUESTED_AT, ALICE)).toBe('proven')
    expect(federatedVerdict({ sub: 'alice-at-op', auth_time: REQUESTED_AT - 31 }, REQUESTED_AT, ALICE)).toBe('stale')
  })

  it('refuses a login from before the request (a provider that ignored prompt=login and max_age=0)', () => {
    expect(federatedVerdict({ sub: 'alice-at-op', auth_time: REQUESTED_AT - 660 }, REQUESTED_AT, ALICE)).toBe('stale')
  })

  it.each([
    ['absent', {}],
    ['a string', { auth_time: String(REQUESTED_AT) }],
    ['not finite', { auth_time: Number.POSITIVE_INFINITY }],
    ['NaN', { auth_time: Number.NaN }],
  ])('refuses an ID token whose auth_time is %s', (_name, claims) => {
    expect(federatedVerdict({ sub: 'alice-at-op', ...claims }, REQUESTED_AT, ALICE)).toBe('noAuthTime')
  })

  it.each([
    ["another user's account", 'mallory-at-op', ALICE],
    ['an account linked to nobody', 'nobody-at-op', ALICE],
    ['any account, when the user has none at the provider', 'alice-at-op', []],
    ['an empty subject', '', ['']],
    ['a subject that only starts like the account', 'alice-at-op-2', ALICE],
  ])('refuses %s', (_name, sub, accounts) => {
    expect(federatedVerdict({ sub, auth_time: REQUESTED_AT }, REQUESTED_AT, accounts)).toBe('otherAccount')
  })

  it('refuses a token without a string subject', () => {
    expect(federatedVerdict({ sub: 42, auth_time: REQUESTED_AT }, REQUESTED_AT, ['42'])).toBe('otherAccount')
    expect(federatedVerdict({ auth_time: REQUESTED_AT }, REQUESTED_AT, ALICE)).toBe('otherAccount')
  })
})
