#!/usr/bin/env node
// `npm run demo`: bundles demo/server.js with the package's own sources (esbuild, under a second) and
// runs it, so a fresh `npm ci` needs no `npm run build` (two TypeScript compiles, about a minute on two
// cores) before the demo listens. The demo still imports the package by name: `authchart/…` resolves
// through package.json's `exports` to the source file the build would compile to that `dist/` path.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { fromSources } from './from-sources.mjs'

const root = new URL('..', import.meta.url).pathname
// Written beside demo/server.js, so the demo's `new URL('./favicon.ico', import.meta.url)` still resolves.
const outfile = join(root, 'demo/.server.bundle.mjs')
await build({
  entryPoints: [join(root, 'demo/server.js')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Dependencies load from node_modules as they would for an application; only our sources are bundled.
  packages: 'external',
  plugins: [fromSources],
  sourcemap: 'inline',
  logLevel: 'warning',
})
await import(pathToFileURL(outfile).href)
