/**
 * The per-request context: what effects and handlers may read about the request being served. Its
 * shape is the engine's (`FlowEnv`), under the resolved config.
 *
 * @module
 */
export type { RequestContext } from '../config/types.js'
