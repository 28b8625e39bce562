/**
 * What the extension tests share: the message a configuration with extensions is refused with when
 * it is loaded.
 *
 * @module
 */
import { expect } from 'vitest'
import { assertConfig } from '../../core/index.js'
import { ConfigError } from '../../core/errors.js'
import type { FlowExtension } from '../../core/extensions.js'
import { loadExtendedComposer } from '../../core/flows/signin-completion/flow.js'
import { testConfig } from '../fixtures/http.js'

// Loaded, the composer checks extensions when the config is resolved (as an app's first request
// does after awaiting it; `loading.test.ts` covers a config served before it is loaded).
await loadExtendedComposer(() => import('../../core/flows/signin-completion/extended.js'))

/**
 * The message of the `ConfigError` the test configuration with `extensions` is refused with.
 *
 * @throws when the configuration is accepted, or refused with another error.
 */
export function refusal(extensions: FlowExtension[]): string {
  try {
    assertConfig(testConfig({ extensions }))
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error('the config was accepted')
}
