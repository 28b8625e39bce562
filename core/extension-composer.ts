/**
 * The key under which an extension made by `defineExtension` carries the loader of the extended
 * completion's composer (see `core/flows/signin-completion/extended.ts`). A leaf: the engine reads
 * the key without importing what defines extensions.
 *
 * @module
 */

/** Where an extension made by `defineExtension` says its composer is loaded from. */
export const EXTENDED_COMPOSER: unique symbol = Symbol.for('authchart.extendedComposer') as never
