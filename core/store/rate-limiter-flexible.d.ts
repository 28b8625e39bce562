// rate-limiter-flexible's index requires every limiter, `cluster` included, which an ESM bundle for
// Node cannot load and an edge runtime does not have: each limiter is imported from its own file,
// typed here from the package's own declarations.
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
