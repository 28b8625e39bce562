import { QwikAuth$ } from 'authchart/qwik'
import { authConfig } from '../auth'

export const { onRequest, useSession, useSignIn, useSignOut } = QwikAuth$((ev) => authConfig(ev.env))
