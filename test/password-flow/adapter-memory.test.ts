/** The password adapter contract on the memory adapter (the PostgreSQL adapter's run is `adapter.test.ts`). */
import { MemoryAdapter } from '../../adapters/memory.js'
import { passwordAdapterContract } from './adapter-contract.js'

const memory = MemoryAdapter()

passwordAdapterContract('memory', () => memory)
