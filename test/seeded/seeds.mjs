/**
 * The seed list of `npm run seeded` (`seeds.json` beside this file), read and checked for shape.
 * Shared by the script and by `seeds.test.ts`, so a seed whose code moved fails the normal suite
 * too, not only the seeded run.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The seeds file. */
export const SEEDS_FILE = fileURLToPath(new URL('./seeds.json', import.meta.url))

/** How many times `needle` occurs in `text` (non-overlapping); 0 for an empty needle. */
export function occurrences(text, needle) {
  if (needle.length === 0) return 0
  let count = 0
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++
  return count
}

const FIELDS = ['id', 'rule', 'file', 'find', 'replace']

/**
 * The seeds, in file order.
 *
 * @throws {TypeError} when a seed lacks a field, has an empty test list or a `replace` equal to
 *   its `find`, or when two seeds share an id.
 */
export function loadSeeds(path = SEEDS_FILE) {
  const seeds = JSON.parse(readFileSync(path, 'utf8'))
  if (!Array.isArray(seeds)) throw new TypeError('the seeds file holds no array')
  const ids = new Set()
  for (const seed of seeds) {
    for (const field of FIELDS) {
      if (typeof seed?.[field] !== 'string' || (field !== 'replace' && seed[field].length === 0)) {
        throw new TypeError(`seed ${seed?.id ?? '?'}: ${field} is not a non-empty string`)
      }
    }
    if (!Array.isArray(seed.tests) || seed.tests.length === 0 || !seed.tests.every((t) => typeof t === 'string')) {
      throw new TypeError(`seed ${seed.id}: tests is not a non-empty list of files`)
    }
    if (seed.find === seed.replace) throw new TypeError(`seed ${seed.id}: replace equals find`)
    if (ids.has(seed.id)) throw new TypeError(`seed ${seed.id}: the id is used twice`)
    ids.add(seed.id)
  }
  return seeds
}
