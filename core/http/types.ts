/**
 * The shape of the routing table, in a leaf: a flow module declares its routes without importing
 * the table (the types are declared with the request context they are written against).
 *
 * @module
 */
export type { FlowBinding, Handler, Route } from '../config/types.js'
