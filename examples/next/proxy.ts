// Next 16's proxy (middleware.ts before): the `authorized` callback in auth.ts decides.
export { auth as proxy } from './auth'

export const config = { matcher: ['/((?!api|_next/static|_next/image|favicon.ico).*)'] }
