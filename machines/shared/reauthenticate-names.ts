/**
 * The names of the re-authentication chart that the core reads without the chart: a module of
 * constants only, so that reading them builds none of the chart's schemas.
 *
 * @module
 */

/** The id of the re-authentication flow. */
export const REAUTHENTICATE = 'reauthenticate'

/** The state that changes the session: reached only with a proven factor. */
export const SESSION_MARKING_STATE = 'markingVerified'
