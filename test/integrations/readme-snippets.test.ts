/**
 * README's integration snippets are files of the example apps, quoted exactly: test/apps/ installs,
 * builds, starts and drives those apps, so each snippet is compiled and run as written.
 */
import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const readme = readFileSync('README.md', 'utf8')
const snippets = [...readme.matchAll(/<!-- snippet: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g)].map(([, path, text]) => ({
  path: path!,
  text: text!,
}))

describe('README integration snippets', () => {
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
