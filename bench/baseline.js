// The baseline of `npm run bench -- --ab`: a previous commit of authchart, built once into
// bench/.baseline/<sha> and reused by every later run against the same commit.
//
// `npm ci` in the copy would take minutes: the copy links this checkout's node_modules instead and
// runs its own `npm run build` (tsc). Both builds then load the same dependencies, so a ratio
// between them is the library's own code only (a change of a dependency's version is not measured).
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** The file written last into a finished baseline: its presence is the cache hit. */
export const BUILT_MARKER = '.bench-baseline-built'

const git = (root, args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()

/** The full commit id of `rev` in the repository at `root` (a tag or a branch resolves to its commit). */
export function resolveCommit(root, rev) {
  try {
    return git(root, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])
  } catch {
    throw new Error(`the baseline revision ${JSON.stringify(rev)} is not a commit of this repository`)
  }
}

/**
 * The default baseline: where this branch left `main` (`git merge-base HEAD main`), or the commit
 * before HEAD when HEAD is on main already (or not ahead of it), so that A and B always differ.
 */
export function defaultBaselineRev(root, mainBranch = 'main') {
  const head = resolveCommit(root, 'HEAD')
  let base
  try {
    base = git(root, ['merge-base', 'HEAD', mainBranch])
  } catch {
    throw new Error(`no merge-base of HEAD and ${mainBranch}: give the baseline with --ab-rev <rev>`)
  }
  return base === head ? resolveCommit(root, 'HEAD~1') : base
}

/** Where the baseline of commit `sha` lives: keyed by the full commit id, so a branch that moves never hits a stale build. */
export function baselineDir(root, sha) {
  if (!/^[0-9a-f]{40}$/.test(sha)) throw new Error(`a baseline is keyed by a full commit id, not ${JSON.stringify(sha)}`)
  return join(resolve(root), 'bench', '.baseline', sha)
}

function run(command, args, cwd, log) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    const keep = (chunk) => (output = `${output}${chunk}`.slice(-16_384))
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code === 0) resolvePromise()
      else {
        log(output)
        reject(new Error(`${command} ${args.join(' ')} exited ${code} in ${cwd}`))
      }
    })
  })
}

/**
 * Builds the baseline of `rev` unless it is built already: `git archive <sha> | tar -x` into a
 * fresh folder beside the final one, this checkout's node_modules linked into it, `build` run there
 * (`npm run build` by default), the marker written, and the folder renamed into place, so that an
 * interrupted build is never taken for a finished one. Returns the commit, the folder and whether
 * it came from the cache.
 */
export async function ensureBaseline({ root, rev, build = ['npm', ['run', 'build']], log = () => {} }) {
  const sha = resolveCommit(root, rev)
  const dir = baselineDir(root, sha)
  if (existsSync(join(dir, BUILT_MARKER))) return { sha, dir, cached: true }
  const staging = `${dir}.partial-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  try {
    log(`  baseline ${sha.slice(0, 12)}: extracting`)
    execFileSync('sh', ['-c', `git archive --format=tar ${sha} | tar -x -C "$0"`, staging], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
    symlinkSync(realpathSync(join(root, 'node_modules')), join(staging, 'node_modules'), 'dir')
    log(`  baseline ${sha.slice(0, 12)}: building (${[build[0], ...build[1]].join(' ')})`)
    await run(build[0], build[1], staging, log)
    writeFileSync(join(staging, BUILT_MARKER), `${sha}\n`)
    // Another run may have finished the same baseline meanwhile, and be measuring it: keep that one.
    if (existsSync(join(dir, BUILT_MARKER))) {
      rmSync(staging, { recursive: true, force: true })
      return { sha, dir, cached: true }
    }
    rmSync(dir, { recursive: true, force: true })
    renameSync(staging, dir)
  } catch (error) {
    rmSync(staging, { recursive: true, force: true })
    throw error
  }
  return { sha, dir, cached: false }
}
