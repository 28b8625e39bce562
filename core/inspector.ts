/**
 * `authchart/inspector`: the development-only flow inspector, brought in by an import
 * (`inspector: flowInspector()`).
 *
 * @module
 */
export { flowInspector, type FlowInspectorOptions } from './inspector/observer.js'
export { INSPECTOR_PATH } from './inspector/recorder.js'
export type { FlowInspector } from './observe/types.js'
