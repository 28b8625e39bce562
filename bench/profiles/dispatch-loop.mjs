import { encode } from 'authchart/jwt'
import Credentials from 'authchart/providers/credentials'
import { parseRequest } from '../../dist/core/http/request.js'
import { dispatch } from '../../dist/core/http/dispatch.js'
import { resolveConfig } from '../../dist/core/config/resolve-config.js'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const SESSION_COOKIE = '__Secure-authjs.session-token'
const config = { secret: SECRET, trustHost: true, basePath: '/auth', logger: { error() {}, warn() {}, debug() {} }, providers: [Credentials({ credentials: { username: {}, password: {} }, authorize: () => null })] }
const cookie = `${SESSION_COOKIE}=${await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt: SESSION_COOKIE })}`
const sget = new Request(`https://bench.test/auth/session`, { headers: { cookie } })
const resolved = resolveConfig(config).config
const sp = await parseRequest(sget, '/auth')
for (let i = 0; i < 200000; i++) await dispatch(sget, sp, resolved)
