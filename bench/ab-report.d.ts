/** One row of the A/B table. */
export interface AbRow {
  case: string
  metric: string
  a: number
  b: number
  ratio: number
  lowerIsBetter: boolean
}

interface Measured {
  cpuUsPerOp: number
  cpuUsPerOpMin?: number
  opsPerSec: number
}

interface ColdStartHandler {
  build: string
  shape: string
  aboveBare: { coldMs: number; cpuMs: number }
  cheapestAboveBare?: { coldMs: number; cpuMs: number }
  loaded?: { files: number; bytes: number }
}

/** The A/B rows of a run: per case and metric, A's and B's values and B ÷ A. */
export declare function abRows(
  run: { scenarios?: { name: string; measured: Record<string, Measured> }[]; coldStart?: { handlers: ColdStartHandler[] } },
  names: { a: string; b: string },
): AbRow[]
