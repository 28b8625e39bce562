/** The cases that are not in-process scenarios, in the order they run. */
export declare const OTHER_CASES: readonly string[]
/** What `--ab` measures when `--only` does not say. */
export declare const AB_CASES: readonly string[]

/** The bench's parsed options. */
export interface BenchOptions {
  quick: boolean
  json: boolean
  http: boolean
  baseline: string | undefined
  ab: boolean
  abRev: string | undefined
  runtimes: string[] | undefined
  processes: number | undefined
  only: string[] | undefined
  wanted: (name: string) => boolean
}

/** Parses the bench's arguments; `known` is every case name `--only` may select. */
export declare function parseBenchArgs(argv: readonly string[], known: readonly string[]): BenchOptions
