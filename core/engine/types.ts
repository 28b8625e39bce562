/**
 * The engine's types: a flow as the engine runs it, an effect, and the environment every effect
 * receives (the request being served and the config it is served under). A leaf: the config types
 * build on it, so it names the config only through a type parameter.
 *
 * @module
 */
import type { Struct } from 'superstruct'
import type { AnyStateMachine, ContextFrom, EventObject, StateValue } from 'xstate'
import type { Adapter, Cookie, CookieOption, Logger } from '../shapes.js'
import type { AuthAction } from '../types.js'

/**
 * Runs one effect. Expected failures are returned as `<name>.failed` events, never thrown; a throw
 * means a bug or an outage and ends the request with the Configuration error. An effect with
 * nothing to wait for may answer synchronously: the engine then takes the event without a
 * microtask hop (a session read runs four effects, each awaiting nothing on its common path).
 */
export type EffectImplementation<Context, Env> = (
  context: Context,
  env: Env,
  trigger: EventObject,
) => EventObject | Promise<EventObject>

/** A flow at rest as its envelope holds it: the state it waits in and its (sealed) context. */
export interface SealedFlowState {
  value: StateValue
  context: unknown
}

/**
 * Carries a flow sealed by an earlier version of a chart over to the current one: the state and
 * context it rested with, as the current chart names them; `null` when it cannot continue (the
 * user starts again). The result is checked like any sealed flow (context shape, a waiting state).
 */
export type FlowMigration = (sealed: SealedFlowState) => SealedFlowState | null

/**
 * A chart's guard, assignment or output as the compiled table references it. The event is typed
 * `never` so that a logic module's functions, each typed with its own chart's events, fit.
 */
export type ChartGuard<Context = any> = (args: { context: Context; event: never }) => boolean
/** An assignment: the fields it writes (xstate's `assign` with the function form). */
export type ChartAssignment<Context = any> = (args: { context: Context; event: never }) => Partial<Context>
/** A final state's `output`, or the machine's `output` (which receives the final state's in `event.output`). */
export type ChartOutput<Context = any> = (args: { context: Context; event: never }) => unknown
/** A waiting state's `meta.outcome`. */
export type ChartOutcome<Context = any> = (context: Context) => unknown

/** One candidate transition of a compiled chart. */
export interface ChartTransition<Context = any> {
  /** The transition's id (`<source state id>:<event type>:<index>`, as `transitions.ts` names it). */
  readonly id: string
  readonly guard?: ChartGuard<Context>
  /** Applied in order, each to the context the previous one wrote. */
  readonly assignments: readonly ChartAssignment<Context>[]
  /** The atomic or final state entered (its key); absent: the transition stays in its state. */
  readonly target?: string
}

/** An atomic or final state of a compiled chart. */
export interface ChartState<Context = any> {
  /** The state's path from the root, dotted (`jwt.decoding`), as `stateLabel` writes a value. */
  readonly key: string
  /** The state value xstate gives this state: the key itself at the root, nested objects below. */
  readonly value: StateValue
  readonly final?: true
  readonly awaitsRequest?: true
  /** The effect the state runs (its `effect.<name>` tag). */
  readonly effect?: string
  /** Final states: their `output` (passed through the chart's {@link CompiledChart.output}). */
  readonly output?: ChartOutput<Context>
  /** Waiting states: `meta.outcome`. */
  readonly outcome?: ChartOutcome<Context>
  /** Waiting states: `meta.step`, the page and events of a step (`core/http/steps.ts`). */
  readonly step?: unknown
  /**
   * Candidates by event type: the state's own first, then each ancestor's, in document order
   * (xstate takes the first enabled one).
   */
  readonly transitions: Readonly<Record<string, readonly ChartTransition<Context>[]>>
}

/**
 * A chart as the engine runs it: a table of its atomic and final states, generated at build time
 * from the xstate notation (`core/charts/`, written by `npm run charts`), or built at run time from
 * a machine by `runtime-compiler.ts` (charts an application extends or defines).
 */
export interface CompiledChart<Context = any> {
  readonly id: string
  readonly version: string
  /** The key of the state a flow starts in. */
  readonly initial: string
  /** The context a flow starts with. */
  readonly context: Context
  /** Every effect the chart's states name. */
  readonly effects: readonly string[]
  /** The machine's `output`, applied to a final state's. */
  readonly output?: ChartOutput<Context>
  /** Every atomic and final state, by {@link ChartState.key}. */
  readonly states: Readonly<Record<string, ChartState<Context>>>
}

/** A flow definition. */
export interface FlowDefinition<TMachine extends AnyStateMachine = AnyStateMachine, Env = unknown> {
  /** The compiled chart the engine runs. */
  readonly chart: CompiledChart<ContextFrom<TMachine>>
  /**
   * The chart's xstate notation (diagrams, the inspector, the test kit, extended charts). A flow
   * defined from a machine at run time holds it; a compiled flow reads it once its notation is
   * loaded (`loadNotation` in `flow.ts`, which `loadedFlows` runs), never on the request path.
   *
   * @throws {Error} when read on a compiled flow whose notation is not loaded.
   */
  readonly machine: TMachine
  /** Loads the notation of a compiled flow (a dynamic import: the request path never runs it). */
  readonly notation?: () => Promise<TMachine>
  /** Shape of the context; a sealed flow whose context does not fit is refused. */
  readonly context: Struct<ContextFrom<TMachine>, unknown>
  readonly effects: Readonly<Record<string, EffectImplementation<ContextFrom<TMachine>, Env>>>
  /**
   * What of the context is sealed while the flow rests; all of it by default. The resting answer is
   * computed first, so what only that answer needs (options already handed to the browser) does
   * not travel back and forth in the cookie. The result must still fit `context`.
   */
  readonly sealed?: (context: ContextFrom<TMachine>) => ContextFrom<TMachine>
  /**
   * Migrations of flows in flight across a deploy, keyed by the chart version that sealed them. A
   * flow sealed by a version with no migration here is not resumed: the user is shown a page that
   * says so and starts again (the callback URL kept). Bump the chart's version whenever the chart
   * changes (a test compares each chart with its committed fingerprint); add a migration when
   * flows resting in the old chart can go on in the new one.
   */
  readonly migrations?: Readonly<Record<string, FlowMigration>>
}

/** The cookies Auth.js defines, by key. `flowState` is ours: it carries sealed flows at rest. */
export interface CookiesOptions {
  sessionToken: CookieOption
  callbackUrl: CookieOption
  csrfToken: CookieOption
  pkceCodeVerifier: CookieOption
  state: CookieOption
  nonce: CookieOption
  webauthnChallenge: CookieOption
  flowState: CookieOption
}

/** Request cookies by name. Created without a prototype, so `__proto__` is an ordinary name. */
export type RequestCookies = Record<string, string | undefined>

/** A session cookie as read from a request: its value and the names of the cookies it came from. */
export interface ChunkedCookie {
  value: string
  names: readonly string[]
}

/** A request after parsing. */
export interface ParsedRequest {
  readonly url: URL
  readonly method: 'GET' | 'POST'
  readonly action: RoutedAction
  readonly providerId?: string
  readonly headers: Headers
  readonly cookies: RequestCookies
  readonly query: Readonly<Record<string, string>>
  /** The JSON or form body of a POST, as a flat object. */
  readonly body?: Readonly<Record<string, unknown>>
}

/** The CSRF state of a request. */
export interface CsrfState {
  /** The token to hand to the client (from the cookie, or freshly minted). */
  token: string
  /** True when the body repeated the cookie's token on a POST. */
  verified: boolean
  /** A new cookie value to set, when the request had no valid one. */
  cookie?: string
}

/**
 * authchart's own actions: `step` (the page of a flow waiting for the user, and its form:
 * `/step/<flow id>`), `two-factor` (a signed-in user's second-factor settings and enrolment),
 * `sessions` (a signed-in user's sessions: list, revoke), `audit` (their recent security activity),
 * and `backchannel-logout` / `frontchannel-logout` (an OpenID Connect provider ends the sessions
 * signed in through it), `organization` (the active organisation and its management),
 * `api-keys` (a signed-in user's API keys) and `device` (the page where a signed-in user approves
 * a device's sign-in).
 */
export type OwnAction =
  | 'step'
  | 'two-factor'
  | 'sessions'
  | 'audit'
  | 'backchannel-logout'
  | 'frontchannel-logout'
  | 'reauthenticate'
  | 'organization'
  | 'api-keys'
  | 'device'

/** Every action the router serves. */
export type RoutedAction = AuthAction | OwnAction

/**
 * Everything an effect, a route's handler or a page knows about the request it serves: the
 * request, the config (`Config`, the resolved config) and the provider the path names
 * (`Provider`). The HTTP layer builds one per request; the engine passes it to every effect.
 */
export interface FlowEnv<Config, Provider> {
  readonly config: Config
  /**
   * The configured adapter (instrumented). A flow's effects receive it typed as the view of the
   * methods the flow declares: the config is refused at load when one of them is missing.
   */
  readonly adapter: Adapter | undefined
  readonly request: ParsedRequest
  /** The web request as received, for callbacks that take one (`authorize`). */
  readonly raw: Request
  /** The client's address as the integration gave it, if it did (rate limits by address). */
  readonly clientAddress: string | undefined
  /** Cookie names and attributes for this request's protocol. */
  readonly cookies: CookiesOptions
  readonly provider?: Provider
  /** The flow a `step` request names (`/step/<flow id>`). */
  readonly flowId?: string
  /** Request time, epoch seconds; the same `at` every event of this request carries. */
  readonly at: number
  readonly logger: Logger
  /** `<origin>` of the request URL, the base of redirects. */
  readonly origin: string
  /** `<origin><basePath>`. */
  readonly authUrl: string
  /** The session cookie as sent, with the names of its chunks. */
  readonly sessionCookie: ChunkedCookie
  /** Cookies the response sets, in order. */
  readonly setCookies: Cookie[]
  /** CSRF state, when the route uses a token. */
  csrf?: CsrfState
  /** The callback URL after the `redirect` callback, when the route uses one. */
  callbackUrl: string
  /**
   * Set when a part this request needed (the adapter, the store) was unavailable and an effect
   * reported it (every failure an effect catches is logged through {@link logger}): the request
   * is then answered 503, not with the refusal or the "no session" the flow fell back to. (A
   * `ServiceUnavailable`; typed by shape, as this module imports no code.)
   */
  readonly outage?: Error & { readonly retryAfter: number }
}
