/** The runtimes of the matrix. */
export declare const RUNTIMES: readonly ['node', 'bun', 'deno', 'workerd']
export type Runtime = (typeof RUNTIMES)[number]
/** The runtime's binary from node_modules; throws with the install command when missing. */
export declare function runtimeBinary(runtime: 'bun' | 'deno'): string
/** Bundles the entry of `runtime` from the sources; returns the file. */
export declare function bundleEntry(runtime: Runtime, outdir?: string): Promise<string>
/** A free loopback port. */
export declare function freePort(): Promise<number>
/** A runtime serving the app. */
export interface StartedRuntime {
  runtime: Runtime
  origin: string
  /** Milliseconds from spawning to listening. */
  startedMs: number
  stop(): Promise<void>
}
/** Starts `runtime` serving `file` on `port` with `env`. */
export declare function startRuntime(
  runtime: Runtime,
  options: { file: string; port: number; env: Record<string, string>; timeoutMs?: number },
): Promise<StartedRuntime>
/** An esbuild plugin resolving `authchart` and its subpaths to the sources. */
export declare const fromSources: import('esbuild').Plugin
