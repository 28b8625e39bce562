/**
 * The membership compare-and-set of the memory adapter alone (the contract runs on PostgreSQL too,
 * in adapters.test.ts and membership.postgres.test.ts): what the mutation run of the organisations
 * checks its writes with, without starting a database for every mutant.
 */
import { describe } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import type { Adapter } from '../../core/adapters.js'
import { membershipChangeContract } from './adapter-contract.js'

let users = 0
const newUser = async (adapter: Adapter) => {
  const id = `memory-user-${++users}`
  await adapter.createUser!({ id, email: `${id}@example.test`, emailVerified: null })
  return id
}

describe('the memory adapter: membership changes', () => {
  membershipChangeContract(() => MemoryAdapter(createMemoryStore()), newUser)
})
