/**
 * The SvelteKit `SignIn` component shows the e-mail field by the provider's type: its list of
 * built-in e-mail provider ids is the set of provider modules whose factory makes an `email`
 * provider, so a new one cannot be missing (`forwardemail` was). The components themselves are
 * rendered in examples/sveltekit by test/apps/sveltekit.test.ts.
 */
import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
// @ts-expect-error plain JavaScript shipped beside the .svelte sources, without declarations
import { EMAIL_PROVIDER_IDS } from '../../integrations/sveltekit/components/email-providers.js'

const files = readdirSync(new URL('../../providers/', import.meta.url)).filter((file) => file.endsWith('.ts'))

async function typeOf(file: string): Promise<{ id: string; type: string } | undefined> {
  const { default: factory } = (await import(/* @vite-ignore */ new URL(`../../providers/${file}`, import.meta.url).href)) as {
    default: (options: Record<string, unknown>) => { id: string; type: string }
  }
  try {
    // Enough options for any factory to build its provider (an e-mail one needs a way to send).
    return factory({ sendVerificationRequest: () => {}, server: 'smtp://localhost:25', authorize: () => null })
  } catch {
    return undefined
  }
}

describe('SignIn: which providers get the e-mail field', () => {
  it('lists exactly the built-in providers whose type is email', async () => {
    const providers = (await Promise.all(files.map(typeOf))).filter((p) => p !== undefined)
    const emailIds = providers.filter((p) => p.type === 'email').map((p) => p.id).sort()
    expect(emailIds).toContain('forwardemail')
    expect([...EMAIL_PROVIDER_IDS].sort()).toEqual(emailIds)
  })
})
