// Module hooks for the "nothing loaded" probe: every specifier resolved that names an
// @opentelemetry package is appended to the file in PROBE_LOG.
import { appendFileSync } from 'node:fs'

export async function resolve(specifier, context, nextResolve) {
  if (specifier.includes('@opentelemetry')) appendFileSync(process.env.PROBE_LOG, `${specifier}\n`)
  return nextResolve(specifier, context)
}
