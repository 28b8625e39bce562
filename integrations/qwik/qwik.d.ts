/**
 * The part of Qwik's and Qwik City's types the Qwik integration uses, for type-checking this
 * repository without installing Qwik (a peer dependency of the published package, whose
 * declarations import the real types; Qwik 1 also asks for an older Vite than this repository's
 * test runner). The example app (examples/qwik) type-checks the published declarations against
 * the real Qwik.
 */
declare module '@builder.io/qwik' {
  export interface QRL<T = unknown> {
    (...args: T extends (...a: infer A) => unknown ? A : never): Promise<T extends (...a: never[]) => infer R ? Awaited<R> : never>
    resolve(): Promise<T>
  }
  export const implicit$FirstArg: <FIRST, REST extends unknown[], RET>(
    fn: (qrl: QRL<FIRST>, ...rest: REST) => RET,
  ) => (qrl: FIRST, ...rest: REST) => RET
  export const inlinedQrl: <T>(symbol: T, symbolName: string, lexicalScopeCapture?: unknown[]) => QRL<T>
  export const useLexicalScope: <VARS extends unknown[]>() => VARS
}

declare module '@builder.io/qwik/build' {
  export const isServer: boolean
}

declare module '@builder.io/qwik-city' {
  import type { QRL } from '@builder.io/qwik'
  export interface Cookie {
    get(name: string): { value: string } | null
    set(name: string, value: string, options?: Record<string, unknown>): void
  }
  export interface RequestEventCommon {
    readonly url: URL
    readonly request: Request
    readonly cookie: Cookie
    readonly sharedMap: Map<string, unknown>
    readonly env: { get(key: string): string | undefined }
    readonly headers: Headers
    readonly clientConn: { readonly ip?: string }
    redirect(status: 301 | 302 | 303 | 307 | 308, url: string): Error
    error(status: number, message: string): Error
    send(response: Response): Error
  }
  export type RequestEvent = RequestEventCommon
  export type RequestEventAction = RequestEventCommon
  export type RequestEventLoader = RequestEventCommon
  export type Loader<RETURN> = { (): { readonly value: RETURN } }
  export type Action<RETURN, INPUT = Record<string, unknown>, OPTIONAL extends boolean = true> = {
    (): { readonly value: RETURN | undefined; submit(input: INPUT): Promise<unknown>; readonly __optional?: OPTIONAL }
  }
  export interface DataValidator {
    validate(ev: RequestEvent, data: unknown): Promise<unknown>
  }
  export const globalActionQrl: <RETURN>(actionQrl: QRL<(data: never, event: RequestEventAction) => unknown>, ...rest: (DataValidator | undefined)[]) => Action<RETURN>
  export const routeLoaderQrl: <RETURN>(loaderQrl: QRL<(event: RequestEventLoader) => RETURN>) => Loader<RETURN>
  export const validatorQrl: (validator: QRL<(ev: RequestEvent, data: unknown) => unknown>) => DataValidator | undefined
}
