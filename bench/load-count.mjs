// `node --import ./bench/load-count.mjs …`: records every file the ES module loader loads (its URL
// and size in bytes, one line each) into the file named by BENCH_LOAD_COUNT. Only the counting
// process of the cold-start case uses it: the hooks run on a thread of their own and would slow
// the timed processes down.
import { register } from 'node:module'

register('./load-count-hooks.mjs', import.meta.url, { data: { file: process.env.BENCH_LOAD_COUNT } })
