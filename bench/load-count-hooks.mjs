// The loader hooks of bench/load-count.mjs (they run on the loader's thread).
import { appendFileSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

let file

/** Receives the file to append to. */
export function initialize(data) {
  file = data.file
}

/** Loads as usual, then appends the URL and size of a file the loader read. */
export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context)
  if (file && url.startsWith('file:')) {
    // CommonJS comes back without its source here (Node reads it itself): its size on disk instead.
    const { source } = result
    const bytes = source == null ? statSync(fileURLToPath(url)).size : typeof source === 'string' ? Buffer.byteLength(source) : source.byteLength
    appendFileSync(file, `${url}\t${bytes}\n`)
  }
  return result
}
