/**
 * Model-based test of the built-in sign-in completion through `Auth` (driver: completion-driver.ts).
 */
import { completionDriver } from './completion-driver.js'
import { describeModel } from './harness.js'

describeModel('sign-in completion machine', completionDriver())
