// Lists the surviving and uncovered mutants of the reports in reports/mutation/ (or of the groups
// named), with the code each one changes: `node test/mutation/survivors.mjs [group …]`.
import { existsSync, readFileSync, readdirSync } from 'node:fs'

const chosen = process.argv.slice(2)
const groups = chosen.length > 0 ? chosen : existsSync('reports/mutation') ? readdirSync('reports/mutation') : []
for (const group of groups) {
  const file = `reports/mutation/${group}/mutation.json`
  if (!existsSync(file)) continue
  const report = JSON.parse(readFileSync(file, 'utf8'))
  for (const [path, { source, mutants }] of Object.entries(report.files)) {
    const lines = source.split('\n')
    for (const m of mutants) {
      if (m.status !== 'Survived' && m.status !== 'NoCoverage') continue
      const { start, end } = m.location
      const original = start.line === end.line ? lines[start.line - 1].slice(start.column - 1, end.column - 1) : `${lines[start.line - 1].slice(start.column - 1)}…`
      console.log(`${m.status === 'Survived' ? 'S' : 'N'} ${path}:${start.line}:${start.column} ${m.mutatorName}: ${original.trim().slice(0, 90)}  =>  ${(m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 70)}`)
    }
  }
}
