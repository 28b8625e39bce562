import express from 'express'
import { ExpressAuth, getSession } from 'authchart/express'
import { authConfig } from './auth.config.js'

const app = express()
app.use('/auth', ExpressAuth(authConfig))

// Every page below knows the session; protected pages send visitors to /login.
app.use(async (req, res, next) => {
  res.locals.session = await getSession(req, authConfig)
  next()
})
const requireUser = (req, res, next) => (res.locals.session?.user ? next() : res.redirect('/login'))
const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

app.get('/', (req, res) => {
  const user = res.locals.session?.user
  res.send(user ? `<p id="who">Signed in as ${escape(user.name)}</p>` : '<p id="who">Not signed in</p>')
})
app.get('/protected', requireUser, (req, res) => {
  res.send(`<p id="secret">Hello ${escape(res.locals.session.user.name)}, this page is protected.</p>`)
})
app.get('/login', (req, res) => res.redirect('/auth/signin?callbackUrl=/protected'))

app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1')
