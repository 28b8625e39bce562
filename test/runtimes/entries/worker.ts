// workerd: a module worker; the environment arrives as bindings (memory adapter: no database).
import { MemoryAdapter } from 'authchart/adapters/memory'
import { runtimeHandler, type RuntimeEnv } from '../app.js'

const handle = runtimeHandler(() => MemoryAdapter())
export default { fetch: (request: Request, env: RuntimeEnv) => handle(request, env) }
