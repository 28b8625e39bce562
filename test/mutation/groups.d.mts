/** A mutation group: the modules it mutates and the test files that guard them. */
export interface MutationGroup {
  mutate: string[]
  tests: string[]
  /** Stryker mutators not applied to this group's modules (only when it runs alone). */
  excludedMutations?: string[]
  /** Leaves out the static mutants (code run when the modules load); only when it runs alone. */
  ignoreStatic?: boolean
}

/** The mutation groups of `npm run mutate`, by name. */
export declare const groups: Record<string, MutationGroup>

/**
 * The Stryker `mutate` pattern of one group entry: a whole file as it is, `file#name` and
 * `file#first..last` as the `file:from-to` line range those declarations span in the file today.
 * Throws when a name is missing or names more than one declaration.
 */
export declare function toStrykerPattern(entry: string, root?: string): string
