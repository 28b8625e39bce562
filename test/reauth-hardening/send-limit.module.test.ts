/**
 * Issue 48, item 5, at the module: `admitMessageTo` counts every message to an inbox against one
 * limit, refuses past it (logged), shares the count between spellings of one inbox and between
 * flows, admits all when the provider turned its throttle off, and fails closed on a store outage
 * unless the limit fails open.
 */
import { describe, expect, it, vi } from 'vitest'
import type { RequestContext } from '../../core/config/types.js'
import {
  admitMessageTo,
  configuredRecipientLimit,
  DEFAULT_RECIPIENT_LIMIT,
  recipientKey,
  recipientLimitOf,
  type RecipientLimit,
} from '../../core/email/send-limit.js'
import { ServiceUnavailable } from '../../core/errors.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthStore } from '../../core/store/index.js'
import { spyLogger } from '../fixtures/http.js'

const limit: RecipientLimit = { perRecipient: 3, window: 900, failOpen: false }

function ctxWith(store: AuthStore = memoryAuthStore(), providers: unknown[] = []) {
  const logger = spyLogger()
  return { ctx: { config: { store, providers }, logger } as unknown as RequestContext, logger }
}

describe('admitMessageTo', () => {
  it('admits up to the limit, then refuses and logs it with the flow', async () => {
    const { ctx, logger } = ctxWith()
    const answers = []
    for (let i = 0; i < 5; i++) answers.push(await admitMessageTo(ctx, 'alice@example.com', 'reauthenticate', limit))
    expect(answers.map((a) => a.admitted)).toEqual([true, true, true, false, false])
    expect(answers.map((a) => a.sent)).toEqual([1, 2, 3, 4, 5])
    expect(logger.warn).toHaveBeenCalledWith('email-send-throttled')
    expect(logger.warn).toHaveBeenCalledTimes(2)
    expect(logger.debug).toHaveBeenCalledWith('email-send-throttled', { flow: 'reauthenticate', limit: 3, window: 900 })
  })

  it('counts one inbox once, however it is spelt, and across flows; another inbox has its own count', async () => {
    const { ctx } = ctxWith()
    await admitMessageTo(ctx, 'victim@gmail.com', 'email', limit)
    await admitMessageTo(ctx, 'Vic.Tim+1@googlemail.com', 'reauthenticate', limit)
    await admitMessageTo(ctx, 'victim+x@gmail.com', 'password-reset', limit)
    expect((await admitMessageTo(ctx, 'v.ictim@gmail.com', 'email', limit)).admitted).toBe(false)
    expect((await admitMessageTo(ctx, 'other@gmail.com', 'email', limit)).admitted).toBe(true)
    expect(await recipientKey(ctx, 'Victim+1@Gmail.com')).toBe(await recipientKey(ctx, 'victim@gmail.com'))
    expect(await recipientKey(ctx, 'victim@gmail.com')).not.toContain('victim')
  })

  it('admits every message uncounted when the limit is off (null)', async () => {
    const { ctx } = ctxWith()
    for (let i = 0; i < 10; i++) expect(await admitMessageTo(ctx, 'alice@example.com', 'email', null)).toEqual({ admitted: true, sent: 0 })
  })

  it('fails closed on a store outage, or sends uncounted when the limit fails open', async () => {
    const down = { increment: vi.fn(async () => Promise.reject(new ServiceUnavailable('store', 'store down', 5))) } as unknown as AuthStore
    const { ctx, logger } = ctxWith(down)
    await expect(admitMessageTo(ctx, 'alice@example.com', 'email', limit)).rejects.toBeInstanceOf(ServiceUnavailable)
    expect((await admitMessageTo(ctx, 'alice@example.com', 'email', { ...limit, failOpen: true })).admitted).toBe(true)
    expect(logger.warn).toHaveBeenCalledWith('rate-limit-unchecked')
  })
})

describe('the counter', () => {
  it("is the first e-mail provider's, whichever provider sends: one count per inbox", async () => {
    const { ctx } = ctxWith(undefined, [{ type: 'credentials', id: 'credentials' }, { type: 'email', id: 'resend' }, { type: 'email', id: 'smtp' }])
    expect(await recipientKey(ctx, 'alice@example.com')).toMatch(/^email:send:resend:identifier:[0-9a-f]{64}$/)
    expect(await recipientKey(ctxWith().ctx, 'alice@example.com')).toMatch(/^email:send:email:identifier:/)
  })
})

describe('the limit that applies', () => {
  it("is the provider's throttle, none when it is off, and 5 per 15 minutes with no e-mail provider", () => {
    const throttle = { perIdentifier: 2, perAddress: 30, window: 60, addressHeader: null, failOpen: true }
    expect(recipientLimitOf({ throttle })).toEqual({ perRecipient: 2, window: 60, failOpen: true })
    expect(recipientLimitOf({ throttle: null })).toBeNull()
    expect(configuredRecipientLimit(ctxWith(undefined, []).ctx)).toEqual(DEFAULT_RECIPIENT_LIMIT)
    expect(configuredRecipientLimit(ctxWith(undefined, [{ type: 'credentials' }, { type: 'email', email: { throttle } }]).ctx)).toEqual({ perRecipient: 2, window: 60, failOpen: true })
    expect(configuredRecipientLimit(ctxWith(undefined, [{ type: 'email', email: { throttle: null } }]).ctx)).toBeNull()
    expect(DEFAULT_RECIPIENT_LIMIT).toEqual({ perRecipient: 5, window: 900, failOpen: false })
  })
})
