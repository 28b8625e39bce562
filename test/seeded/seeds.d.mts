/** One seeded defect of `npm run seeded`. */
export interface Seed {
  id: string
  /** The security rule the defect breaks, in one sentence. */
  rule: string
  /** The file it is seeded in, from the repository root. */
  file: string
  /** The exact source text replaced; must occur exactly once in {@link Seed.file}. */
  find: string
  replace: string
  /** The unit test files that must catch it. */
  tests: string[]
}

/** The seeds file (`test/seeded/seeds.json`). */
export declare const SEEDS_FILE: string

/** How many times `needle` occurs in `text` (non-overlapping); 0 for an empty needle. */
export declare function occurrences(text: string, needle: string): number

/** The seeds, in file order; throws a `TypeError` for a malformed list or a duplicate id. */
export declare function loadSeeds(path?: string): Seed[]
