/**
 * The SignIn and SignOut components of `authchart/sveltekit/components` (spec §4.1).
 *
 * @module
 */
import type { SvelteComponent } from 'svelte'
import type { HTMLFormAttributes } from 'svelte/elements'

/** `redirectTo` (or `callbackUrl`) and `redirect`, as a record or a FormData. */
export type FormOptions = { redirectTo?: string; callbackUrl?: string; redirect?: boolean } | FormData

/**
 * Props of {@link SignIn}; any other attribute (`id`, `data-*`, `aria-*`, `class`…) is set on the
 * `<form>`, as `@auth/sveltekit` does.
 */
export interface SignInProps extends Omit<HTMLFormAttributes, 'method' | 'action'> {
  /** The provider id. */
  provider?: string
  /** The route of the `signIn` form action, without the leading slash (default `signin`). */
  signInPage?: string
  options?: FormOptions
  authorizationParams?: string[][] | Record<string, string> | string | URLSearchParams
  className?: string
  /** The provider's type, for a provider under an id of your own: `email` shows the e-mail field. */
  type?: 'oauth' | 'oidc' | 'email' | 'credentials' | 'webauthn'
}

/** Props of {@link SignOut}; any other attribute is set on the `<form>`. */
export interface SignOutProps extends Omit<HTMLFormAttributes, 'method' | 'action'> {
  /** The route of the `signOut` form action, without the leading slash (default `signout`). */
  signOutPage?: string
  options?: FormOptions
  className?: string
}

/** A sign-in form posting to the `signIn` form action; slots `credentials`, `email`, `submitButton`. */
export declare class SignIn extends SvelteComponent<
  SignInProps,
  Record<string, never>,
  { credentials: Record<string, never>; email: Record<string, never>; submitButton: Record<string, never> }
> {}

/** A sign-out form posting to the `signOut` form action; slot `submitButton`. */
export declare class SignOut extends SvelteComponent<
  SignOutProps,
  Record<string, never>,
  { submitButton: Record<string, never> }
> {}
