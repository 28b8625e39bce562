// Modules imported by their file, typed from their package's own declarations.
//
// rate-limiter-flexible's index requires every limiter, `cluster` included, which an ESM bundle for
// Node cannot load and an edge runtime does not have: each limiter is imported from its own file.
declare module 'rate-limiter-flexible/lib/RateLimiterMemory.js' {
  import { RateLimiterMemory } from 'rate-limiter-flexible'
  export default RateLimiterMemory
}
declare module 'rate-limiter-flexible/lib/RateLimiterRes.js' {
  import { RateLimiterRes } from 'rate-limiter-flexible'
  export default RateLimiterRes
}
declare module 'rate-limiter-flexible/lib/RateLimiterRedis.js' {
  import { RateLimiterRedis } from 'rate-limiter-flexible'
  export default RateLimiterRedis
}
declare module 'rate-limiter-flexible/lib/RateLimiterPostgres.js' {
  import { RateLimiterPostgres } from 'rate-limiter-flexible'
  export default RateLimiterPostgres
}

// qrcode's index loads its PNG, terminal and file renderers (pngjs, node:fs, node:zlib): the
// enrolment page needs the encoder and the SVG renderer only.
declare module 'qrcode/lib/core/qrcode.js' {
  import type { QRCode, QRCodeOptions } from 'qrcode'
  export function create(text: string, options?: QRCodeOptions): QRCode
}
declare module 'qrcode/lib/renderer/svg-tag.js' {
  import type { QRCode, QRCodeToStringOptions } from 'qrcode'
  export function render(qrData: QRCode, options?: QRCodeToStringOptions): string
}
