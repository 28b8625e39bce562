#!/usr/bin/env node
/**
 * `authchart` command line:
 *
 * ```sh
 * npx authchart secret                     # a fresh AUTH_SECRET
 * npx authchart diagram <flow> [--format svg|mermaid|json] [--config path]
 * npx authchart flows [--config path]
 * ```
 *
 * `--config` names a module of the application: its `extensions` (or its default export's, an
 * `AuthConfig`) are inserted into the sign-in completion, and its `flows` export (machines, or flow
 * definitions with a `machine`) adds flows or replaces built-in ones with the same id, so a flow is
 * drawn as the application runs it.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import type { AnyStateMachine } from 'xstate'
import { buildSignInCompletion, type CompletionExtension } from '../machines/signin-completion.machine.js'
import { builtInMachines, diagram, type DiagramFormat } from './flows.js'

const USAGE = `Usage:
  authchart secret
  authchart diagram <flow> [--format svg|mermaid|json] [--config path]
  authchart flows [--config path]`

/**
 * A fresh secret for `AUTH_SECRET`: 32 random bytes, base64url (43 characters, above the
 * 32-character minimum), as Auth.js's `npx auth secret` makes them.
 */
function newSecret(): string {
  return randomBytes(32).toString('base64url')
}

const isMachine = (value: unknown): value is AnyStateMachine =>
  typeof value === 'object' && value !== null && 'root' in value && 'id' in value && 'transition' in value

/** The flows known to the CLI: built-in ones, then the config module's `flows` by id. */
async function knownFlows(configPath: string | undefined): Promise<Map<string, AnyStateMachine>> {
  const flows = new Map(builtInMachines.map((machine) => [machine.id, machine]))
  if (configPath) {
    const module = (await import(pathToFileURL(resolve(configPath)).href)) as Record<string, unknown>
    const config = module.default as Record<string, unknown> | undefined
    const extensions = (module.extensions ?? config?.extensions ?? []) as CompletionExtension[]
    if (extensions.length > 0) {
      const extended = buildSignInCompletion(extensions)
      flows.set(extended.id, extended)
    }
    const declared = (module.flows ?? (module.default as Record<string, unknown> | undefined)?.flows ?? []) as unknown[]
    for (const entry of declared) {
      const machine = isMachine(entry) ? entry : (entry as { machine?: unknown })?.machine
      if (!isMachine(machine)) throw new TypeError(`${configPath}: every entry of \`flows\` must be a machine or have one`)
      flows.set(machine.id, machine)
    }
  }
  return flows
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      format: { type: 'string', default: 'svg' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const [command, flowId] = positionals
  if (values.help || !command) {
    console.log(USAGE)
    return values.help ? 0 : 1
  }
  if (command === 'secret') {
    // The secret alone on stdout (so `AUTH_SECRET=$(npx authchart secret)` works); the hint on stderr.
    console.log(newSecret())
    console.error('Set it as AUTH_SECRET (or the `secret` option). Keep it out of version control.')
    return 0
  }
  const flows = await knownFlows(values.config)
  if (command === 'flows') {
    for (const id of flows.keys()) console.log(id)
    return 0
  }
  if (command !== 'diagram' || !flowId) {
    console.error(USAGE)
    return 1
  }
  const machine = flows.get(flowId)
  if (!machine) {
    console.error(`Unknown flow "${flowId}". Known flows: ${[...flows.keys()].join(', ')}`)
    return 1
  }
  const format = values.format as DiagramFormat
  if (!['svg', 'mermaid', 'json'].includes(format)) {
    console.error(`Unknown format "${format}": use svg, mermaid or json`)
    return 1
  }
  process.stdout.write(await diagram(machine, format))
  return 0
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error))
    process.exitCode = 1
  },
)
