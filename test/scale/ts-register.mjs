// `node --import ./test/scale/ts-register.mjs file.ts`: runs TypeScript sources (see ts-hooks.mjs).
import { register } from 'node:module'

register('./ts-hooks.mjs', import.meta.url)
