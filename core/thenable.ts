/** Whether `value` is a promise (or any thenable): what a callback, effect or store call answered later rather than at once. */
export const isThenable = <T = unknown>(value: unknown): value is PromiseLike<T> =>
  typeof (value as { then?: unknown } | null)?.then === 'function'
