/**
 * The part of `@sveltejs/kit`'s types the SvelteKit integration uses, for type-checking this
 * repository without installing SvelteKit (a peer dependency of the published package, whose
 * declarations import the real types). The example app (examples/sveltekit) type-checks the
 * published declarations against the real SvelteKit.
 */
declare module '@sveltejs/kit' {
  export interface Cookies {
    get(name: string): string | undefined
    set(name: string, value: string, options: Record<string, unknown> & { path: string }): void
    delete(name: string, options: { path: string }): void
  }
  export interface RequestEvent {
    cookies: Cookies
    request: Request
    url: URL
    locals: App.Locals
    platform: Readonly<App.Platform> | undefined
    isDataRequest: boolean
    getClientAddress(): string
    setHeaders(headers: Record<string, string>): void
  }
  export type MaybePromise<T> = T | Promise<T>
  export type Handle = (input: {
    event: RequestEvent
    resolve: (event: RequestEvent) => MaybePromise<Response>
  }) => MaybePromise<Response>
  export type Action = (event: RequestEvent) => MaybePromise<unknown>
  export function redirect(status: 300 | 301 | 302 | 303 | 304 | 305 | 306 | 307 | 308, location: string | URL): never
  export function error(status: number, body: { message: string }): never
}

declare namespace App {
  interface Locals {}
  interface Platform {}
}
