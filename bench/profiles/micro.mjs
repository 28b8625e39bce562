import { encode, decode } from 'authchart/jwt'
import { openSessionToken, sessionKey } from '../floor.js'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const salt = '__Secure-authjs.session-token'
const token = await encode({ token: { name: 'Alice', email: 'a@x.test', sub: '1' }, secret: SECRET, salt })
const key = sessionKey(SECRET, salt)
async function time(name, fn, n = 50000) {
  for (let i = 0; i < 5000; i++) await fn()
  const c = process.cpuUsage(); for (let i = 0; i < n; i++) await fn(); const u = process.cpuUsage(c)
  console.log(name.padEnd(20), ((u.user + u.system) / n).toFixed(2))
}
for (let r = 0; r < 3; r++) {
  await time('floor', () => openSessionToken(token, key))
  await time('decode', () => decode({ token, secret: SECRET, salt }))
}
