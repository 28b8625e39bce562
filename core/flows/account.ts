/**
 * What the first factors that know an account before its user share: finding the user an account
 * is linked to (credentials and OAuth), and keeping a linked account's tokens fresh (OAuth sign-in
 * and the session's token refresh).
 *
 * @module
 */
import type { FlowContext, RequestContext } from '../config/types.js'
import type { AdapterAccount } from '../shapes.js'

/** The account a first factor verified (a provider identity), as its context keeps it. */
interface AccountContext {
  account: Record<string, unknown> | null
}

/**
 * The `lookUpAccount` effect: the stored user the verified account is linked to, or `null` when
 * it is linked to no one yet (the sign-in completion then links it, or refuses).
 */
export async function lookUpAccount(
  context: AccountContext,
  { adapter }: FlowContext<'getUserByAccount'>,
): Promise<{ user: Record<string, unknown> | null }> {
  const { provider, providerAccountId } = context.account as unknown as AdapterAccount
  const user = await adapter.getUserByAccount({ provider, providerAccountId })
  return { user: user as unknown as Record<string, unknown> | null }
}

/** Refreshes the tokens stored on a linked account (updateAccount, or unlink + link). */
export async function storeAccountTokens(ctx: RequestContext, account: AdapterAccount): Promise<void> {
  const { adapter } = ctx
  if (adapter?.updateAccount) {
    await adapter.updateAccount(account)
  } else if (adapter?.unlinkAccount && adapter.linkAccount) {
    await adapter.unlinkAccount({ provider: account.provider, providerAccountId: account.providerAccountId })
    await adapter.linkAccount(account)
  } else {
    ctx.logger.debug('adapter cannot update account tokens', { provider: account.provider })
  }
}
