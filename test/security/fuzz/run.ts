/**
 * What every fuzz file does the same way: start the outside parties once per file, print the seed,
 * capture the log while the property runs, and name the seed that replays a failure.
 *
 * @module
 */
import fc from 'fast-check'
import { afterAll, beforeAll } from 'vitest'
import { fuzzSeed } from './plans.js'
import { startOutsideParties, type OutsideParties, type World } from './world.js'

/** This process's base seed: `FUZZ_SEED`, or random. Each world runs base + its index. */
export const SEED = fuzzSeed()

/** Starts the outside parties before the file's tests and stops them after; returns them. */
export function useOutsideParties(): () => OutsideParties {
  let parties: OutsideParties | undefined
  beforeAll(async () => {
    parties = await startOutsideParties()
  })
  afterAll(() => parties?.close())
  return () => {
    if (!parties) throw new Error('the outside parties are not started yet (use them inside a test)')
    return parties
  }
}

/**
 * Checks `predicate` on `runs` values of `arbitrary` with the world's log captured (so the oracles
 * can judge it), without shrinking (every run prepares real state; the failing plan is printed
 * whole instead).
 *
 * @throws the first violation, with the `FUZZ_SEED` that replays it.
 */
export async function fuzz<T>(
  world: World,
  label: string,
  index: number,
  runs: number,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
): Promise<void> {
  const seed = SEED + index
  world.log.print(`${label}: FUZZ_SEED=${SEED} (this run uses seed ${seed})`)
  world.log.install()
  try {
    await fc.assert(fc.asyncProperty(arbitrary, predicate), { numRuns: runs, seed, endOnFailure: true })
  } catch (error) {
    throw new Error(`${(error as Error).message}\n\nReplay with FUZZ_SEED=${SEED}.`, { cause: error })
  } finally {
    world.log.restore()
  }
}
