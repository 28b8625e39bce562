import { signIn } from '../../hooks.server'

export const actions = { default: signIn }
