// `node bench/profiles/bundle-purpose.mjs [edge|node]` after `npm run build`: the credentials-only
// single-file bundle (scripts/bundle.mjs, minified) broken down by what each input is there for,
// from esbuild's metafile (bytes each input contributes to the output), KB; then the inputs no rule
// names. The purposes marked "decision 3" stay in every bundle (issue 42).
import { bundle } from '../../scripts/bundle.mjs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const out = mkdtempSync(join(tmpdir(), 'authchart-bundle-purpose-'))
const r = await bundle({ library: 'authchart', configuration: 'credentials', target: process.argv[2] ?? 'edge', outdir: out })
const inputs = Object.values(r.metafile.outputs)[0].inputs
const rules = [
  ['OAuth/OIDC (plain-object providers; decision 3)', /oauth4webapi|core\/oauth\/|flows\/oauth\/|charts\/oauth-signin|machines\/oauth-signin|fast\/id-token/],
  ['back-channel / provider logout', /flows\/logout\/|charts\/logout|machines\/logout|oauth\/logout-token/],
  ['e-mail (plain-object providers; decision 3)', /core\/email\/|flows\/email\/|charts\/email-signin|machines\/email-signin/],
  ['jose', /node_modules\/jose/],
  ['rate limit (rate-limiter-flexible, store)', /rate-limiter-flexible|core\/store\//],
  ['session (chart, logic, flow, authority, cache)', /charts\/session|machines\/session|flows\/session\/|core\/session\//],
  ['credentials + sign-in completion', /credentials|signin-completion/],
  ['pages (HTML)', /core\/pages\/|sessions-page/],
  ['config (resolve, validate, superstruct)', /core\/config\/|superstruct/],
  ['engine (stepper, envelope, advance)', /core\/engine\//],
  ['HTTP (parse, dispatch, routes, handlers, answer)', /core\/http\//],
  ['fast crypto, JWT codec, cookies', /core\/fast\/|core\/jwt|core\/cookies|core\/crypto/],
  ['logger, errors, outage, observe', /core\/(logger|errors|outage)|core\/observe\//],
]
const sums = new Map(rules.map(([n]) => [n, 0])); sums.set('other', 0)
const other = []
for (const [file, { bytesInOutput }] of Object.entries(inputs)) {
  const rule = rules.find(([, re]) => re.test(file))
  sums.set(rule ? rule[0] : 'other', sums.get(rule ? rule[0] : 'other') + bytesInOutput)
  if (!rule) other.push([file, bytesInOutput])
}
const total = [...sums.values()].reduce((a, b) => a + b, 0)
rmSync(out, { recursive: true, force: true })
console.log('bundle', r.bytes, 'bytes; inputs', total)
console.log('| part | KB |\n|---|---:|')
for (const [n, b] of [...sums].sort((a, b) => b[1] - a[1])) console.log(`| ${n} | ${(b / 1000).toFixed(1)} |`)
console.log(other.sort((a, b) => b[1] - a[1]).map(([f, b]) => `${b} ${f}`).join('\n'))
