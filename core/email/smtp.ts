/**
 * Sending over SMTP through Nodemailer, an optional peer dependency: it is imported only when the
 * first message is sent, so `authchart/providers/nodemailer` loads (and the package builds) without
 * it, and the core stays free of Node types.
 *
 * @module
 */
import { renderMessage, sendError, type SendVerificationRequestParams } from './provider.js'

/** The part of Nodemailer used here (declared locally: its types pull in Node's). */
interface Nodemailer {
  createTransport(server: unknown): {
    sendMail(message: Record<string, unknown>): Promise<{ rejected?: unknown[]; pending?: unknown[] }>
  }
}

// A specifier in a variable keeps bundlers and TypeScript from resolving the optional peer eagerly.
const NODEMAILER = 'nodemailer'
let loaded: Promise<Nodemailer> | undefined

/**
 * Loads Nodemailer once.
 *
 * @throws {Error} saying how to install it when it is missing.
 */
function nodemailer(): Promise<Nodemailer> {
  loaded ??= (import(NODEMAILER) as Promise<Nodemailer & { default?: Nodemailer }>).then(
    (module) => (typeof module.createTransport === 'function' ? module : module.default!),
    (error: unknown) => {
      loaded = undefined
      throw new Error('The nodemailer provider needs Nodemailer: npm install nodemailer', { cause: error })
    },
  )
  return loaded
}

/** Transports by server setting, so connections are pooled per configured server. */
const transports = new WeakMap<object, ReturnType<Nodemailer['createTransport']>>()
const urlTransports = new Map<string, ReturnType<Nodemailer['createTransport']>>()

async function transportFor(server: string | Record<string, unknown>) {
  const { createTransport } = await nodemailer()
  if (typeof server === 'string') {
    let transport = urlTransports.get(server)
    if (!transport) urlTransports.set(server, (transport = createTransport(server)))
    return transport
  }
  let transport = transports.get(server)
  if (!transport) transports.set(server, (transport = createTransport(server)))
  return transport
}

/**
 * Auth.js's Nodemailer sender: the default message to `identifier` from `provider.from` through
 * `provider.server`; a recipient the server rejects or leaves pending fails the send.
 *
 * @throws {Error} when Nodemailer is missing, the server refuses, or a recipient is rejected.
 */
export async function sendWithNodemailer(params: SendVerificationRequestParams): Promise<void> {
  const transport = await transportFor(params.provider.server!)
  let result
  try {
    result = await transport.sendMail({ ...renderMessage(params) })
  } catch (error) {
    throw sendError('SMTP', error instanceof Error ? error.message : String(error), params)
  }
  const failed = [...(result.rejected ?? []), ...(result.pending ?? [])].filter(Boolean)
  if (failed.length) throw new Error(`Email (${failed.join(', ')}) could not be sent`)
}
