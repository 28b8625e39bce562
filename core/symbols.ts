/**
 * Opt-out markers. They are symbols rather than booleans so that every use stands out in review.
 *
 * @module
 */

/**
 * Disables the CSRF check. Only for framework integrations that enforce same-origin requests
 * themselves (for example SvelteKit's origin check); never for applications.
 */
export const skipCSRFCheck: unique symbol = Symbol('skip-csrf-check')

/** Makes `Auth` return the internal response object instead of a web `Response`. */
export const raw: unique symbol = Symbol('return-type-raw')

/**
 * Key under which a provider may carry its own `fetch` for requests to the provider's endpoints
 * (proxies, logging). Whatever it returns is trusted as the provider's answer.
 */
export const customFetch: unique symbol = Symbol('custom-fetch')
