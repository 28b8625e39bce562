/**
 * The integration snippets of README and of the documentation's getting-started pages are files of
 * the example apps, quoted exactly: test/apps/ installs, builds, starts and drives those apps, so
 * each snippet is compiled and run as written.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const readme = ['README.md', ...readdirSync('docs/getting-started').map((name) => `docs/getting-started/${name}`)]
  .map((path) => readFileSync(path, 'utf8'))
  .join('\n')
const snippets = [...readme.matchAll(/<!-- snippet: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g)].map(([, path, text]) => ({
  path: path!,
  text: text!,
}))

describe('README and getting-started integration snippets', () => {
  it('quotes at least one file of each integration example', () => {
    for (const framework of ['express', 'fastify', 'sveltekit', 'qwik', 'next', 'hono']) {
      expect(snippets.some((s) => s.path.startsWith(`examples/${framework}/`)), framework).toBe(true)
    }
  })

  it.each(snippets.map((s) => [s.path, s] as const))('quotes %s exactly as the app runs it', (path, snippet) => {
    expect(existsSync(path), `${path} exists`).toBe(true)
    expect(snippet.text).toBe(readFileSync(path, 'utf8'))
  })
})
