/** A mutation group: the modules it mutates and the test files that guard them. */
export interface MutationGroup {
  mutate: string[]
  tests: string[]
}

/** The mutation groups of `npm run mutate`, by name. */
export declare const groups: Record<string, MutationGroup>
