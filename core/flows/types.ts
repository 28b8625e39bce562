/**
 * What a flow module declares, in a leaf: the registry, the routing table, the pages, the inspector,
 * the diagrams and the test kit read these declarations without importing any flow for its types,
 * and the sign-in completion calls a first factor's `storeUser` without importing its code (the
 * types are declared with the request context they are written against).
 *
 * @module
 */
export type {
  AdapterNeeds,
  FirstFactor,
  FlowModule,
  FlowSteps,
  IssuedSession,
  ProviderSessions,
  SignInForm,
  SignInFormField,
  SignInFormProvider,
  SignInPage,
  SignInPageFields,
  StoredUser,
  UserStore,
} from '../config/types.js'
