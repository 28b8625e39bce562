/**
 * The PHC string format (`$id$v=19$m=65536,t=3,p=4$salt$hash`): parsing that never throws, and
 * formatting with unpadded standard base64 as argon2's reference implementation writes it.
 *
 * @module
 */
import { decodeBase64, encodeBase64Unpadded } from './encoding.js'

/** A parsed PHC string: the algorithm id, its optional version, named parameters, salt and digest. */
export interface PhcHash {
  id: string
  version?: number
  parameters: Record<string, string>
  salt: Uint8Array
  digest: Uint8Array
}

const ID = /^[a-z0-9-]{1,32}$/
const PARAMETER = /^([a-z0-9-]{1,32})=([a-zA-Z0-9/+.-]{1,64})$/

/**
 * Parses a PHC string whose salt and digest are standard base64 (the `decode` argument swaps in
 * passlib's adapted base64); `undefined` for anything malformed.
 */
export function parsePhc(
  stored: string,
  decode: (text: string) => Uint8Array | undefined = decodeBase64,
): PhcHash | undefined {
  if (stored.length > 1024 || !stored.startsWith('$')) return undefined
  const fields = stored.slice(1).split('$')
  const id = fields.shift()
  if (!id || !ID.test(id) || fields.length < 2 || fields.length > 4) return undefined
  let version: number | undefined
  if (fields[0]?.startsWith('v=')) {
    const value = fields.shift()!.slice(2)
    if (!/^\d{1,4}$/.test(value)) return undefined
    version = Number(value)
  }
  if (fields.length !== 3) return undefined
  const [parameterText, saltText, digestText] = fields as [string, string, string]
  const parameters: Record<string, string> = {}
  for (const pair of parameterText.split(',')) {
    const match = PARAMETER.exec(pair)
    if (!match) return undefined
    const [, name, value] = match as unknown as [string, string, string]
    if (Object.hasOwn(parameters, name)) return undefined
    parameters[name] = value
  }
  const salt = decode(saltText)
  const digest = decode(digestText)
  if (!salt || !digest || salt.length === 0 || digest.length === 0) return undefined
  return version === undefined ? { id, parameters, salt, digest } : { id, version, parameters, salt, digest }
}

/** Reads a decimal parameter within [min, max]; `undefined` when absent or out of range. */
export function integerParameter(hash: PhcHash, name: string, min: number, max: number): number | undefined {
  const text = hash.parameters[name]
  if (text === undefined || !/^\d{1,10}$/.test(text)) return undefined
  const value = Number(text)
  return value >= min && value <= max ? value : undefined
}

/** Writes a PHC string; parameters in the order given. */
export function formatPhc(hash: PhcHash, encode: (bytes: Uint8Array) => string = encodeBase64Unpadded): string {
  const version = hash.version === undefined ? '' : `$v=${hash.version}`
  const parameters = Object.entries(hash.parameters)
    .map(([name, value]) => `${name}=${value}`)
    .join(',')
  return `$${hash.id}${version}$${parameters}$${encode(hash.salt)}$${encode(hash.digest)}`
}
