/** The file written last into a finished baseline: its presence is the cache hit. */
export declare const BUILT_MARKER: string
/** The full commit id of `rev` in the repository at `root`. */
export declare function resolveCommit(root: string, rev: string): string
/** The default baseline: the merge-base of HEAD and `mainBranch`, or HEAD~1 when HEAD is not ahead of it. */
export declare function defaultBaselineRev(root: string, mainBranch?: string): string
/** Where the baseline of commit `sha` lives, keyed by the full commit id. */
export declare function baselineDir(root: string, sha: string): string
/** Builds the baseline of `rev` unless it is built already. */
export declare function ensureBaseline(options: {
  root: string
  rev: string
  build?: [command: string, args: string[]]
  log?: (line: string) => void
}): Promise<{ sha: string; dir: string; cached: boolean }>
