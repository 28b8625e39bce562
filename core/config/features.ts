/**
 * The optional features a configuration names by import (see `core/modules.ts`): each option takes
 * only its module's value, and anything else — the plain objects of earlier versions, a module
 * given to the wrong option, a WebAuthn provider written as a plain object — is refused at load
 * with the line to write instead.
 *
 * @module
 */
import { StructError, create } from 'superstruct'
import { ConfigError } from '../errors.js'
import { featureOf, providerFlowOf } from '../modules.js'
import type { AuthConfig } from '../types.js'
import type { ApiKeysModule, DeviceAuthorizationModule, FlowModule, OrganizationsModule, ResolvedProvider, SecondFactorModule, ServiceAccountsModule, StepUpModule } from './types.js'
import { StepUpOptionsStruct } from './structs.js'

/** The line that turns step-up on, as the refusals print it. */
export const STEP_UP_LINE = "stepUp: stepUp({ … }) with import { stepUp } from 'authchart/step-up'"
/** The line that turns the second factor on, as the refusals print it. */
export const SECOND_FACTOR_LINE = "secondFactor: totp() with import { totp } from 'authchart/second-factor'"
/** The line that turns organisations on, as the refusals print it. */
export const ORGANIZATIONS_LINE = "organizations: organizations({ … }) with import { organizations } from 'authchart/organizations'"
/** The line that turns API keys on, as the refusals print it. */
export const API_KEYS_LINE = "apiKeys: apiKeys({ … }) with import { apiKeys } from 'authchart/api-keys'"
/** The line that turns service accounts on, as the refusals print it. */
export const SERVICE_ACCOUNTS_LINE = "serviceAccounts: serviceAccounts({ … }) with import { serviceAccounts } from 'authchart/service-accounts'"
/** The line that turns the device authorization grant on, as the refusals print it. */
export const DEVICE_AUTHORIZATION_LINE =
  "deviceAuthorization: deviceAuthorization({ clients }) with import { deviceAuthorization } from 'authchart/device-authorization'"
/** The lines that configure a WebAuthn provider, as the refusal prints them. */
export const WEBAUTHN_LINE =
  "Passkey({ … }) with import Passkey from 'authchart/providers/passkey' (or WebAuthn from 'authchart/providers/webauthn')"

/** Options of earlier versions, or guesses, that once meant "turn the second factor on". */
const SECOND_FACTOR_ALIASES = ['twoFactor', 'totp', 'mfa'] as const

/** The feature modules of a configuration, checked. */
export interface FeatureModules {
  stepUp: StepUpModule | undefined
  secondFactor: SecondFactorModule | undefined
  organizations: OrganizationsModule | undefined
  apiKeys: ApiKeysModule | undefined
  serviceAccounts: ServiceAccountsModule | undefined
  deviceAuthorization: DeviceAuthorizationModule | undefined
}

/**
 * The configuration's feature modules.
 *
 * @throws {ConfigError} for an option that is not its module's value (with the line to write), or
 *   step-up options the struct refuses.
 */
export function featureModulesOf(source: AuthConfig): FeatureModules {
  // Not an object at all: the config struct says so.
  if (typeof source !== 'object' || source === null) return { stepUp: undefined, secondFactor: undefined, organizations: undefined, apiKeys: undefined, serviceAccounts: undefined, deviceAuthorization: undefined }
  const given = source as unknown as Record<string, unknown>
  for (const alias of SECOND_FACTOR_ALIASES) {
    if (given[alias] !== undefined) {
      throw new ConfigError(`config.${alias}: the second factor is turned on by its import. Write \`${SECOND_FACTOR_LINE}\``, [alias])
    }
  }
  const stepUp = given.stepUp
  if (stepUp !== undefined && featureOf(stepUp) !== 'step-up') {
    throw new ConfigError(`config.stepUp: step-up is configured by its import, not an object. Write \`${STEP_UP_LINE}\``, ['stepUp'])
  }
  const secondFactor = given.secondFactor
  if (secondFactor !== undefined && featureOf(secondFactor) !== 'second-factor') {
    throw new ConfigError(
      `config.secondFactor: the second factor is configured by its import. Write \`${SECOND_FACTOR_LINE}\``,
      ['secondFactor'],
    )
  }
  const organizations = given.organizations
  if (organizations !== undefined && featureOf(organizations) !== 'organizations') {
    throw new ConfigError(`config.organizations: organisations are configured by their import. Write \`${ORGANIZATIONS_LINE}\``, ['organizations'])
  }
  const apiKeys = given.apiKeys
  if (apiKeys !== undefined && featureOf(apiKeys) !== 'api-keys') {
    throw new ConfigError(`config.apiKeys: API keys are configured by their import, not an object. Write \`${API_KEYS_LINE}\``, ['apiKeys'])
  }
  const serviceAccounts = given.serviceAccounts
  if (serviceAccounts !== undefined && featureOf(serviceAccounts) !== 'service-accounts') {
    throw new ConfigError(
      `config.serviceAccounts: service accounts are configured by their import, not an object. Write \`${SERVICE_ACCOUNTS_LINE}\``,
      ['serviceAccounts'],
    )
  }
  const deviceAuthorization = given.deviceAuthorization
  if (deviceAuthorization !== undefined && featureOf(deviceAuthorization) !== 'device-authorization') {
    throw new ConfigError(
      `config.deviceAuthorization: the device authorization grant is configured by its import, not an object. Write \`${DEVICE_AUTHORIZATION_LINE}\``,
      ['deviceAuthorization'],
    )
  }
  if (stepUp !== undefined) checkStepUpOptions((stepUp as StepUpModule).options)
  return {
    stepUp: stepUp as StepUpModule | undefined,
    secondFactor: secondFactor as SecondFactorModule | undefined,
    organizations: organizations as OrganizationsModule | undefined,
    apiKeys: apiKeys as ApiKeysModule | undefined,
    serviceAccounts: serviceAccounts as ServiceAccountsModule | undefined,
    deviceAuthorization: deviceAuthorization as DeviceAuthorizationModule | undefined,
  }
}

function checkStepUpOptions(options: unknown): void {
  try {
    create(options, StepUpOptionsStruct)
  } catch (error) {
    if (!(error instanceof StructError)) throw error
    const failure = error.failures()[0] ?? error
    const path = ['stepUp', ...failure.path]
    throw new ConfigError(
      `config.${path.join('.')}: ${failure.type === 'never' ? 'unknown option' : `expected ${failure.type}`} (in stepUp({ … }))`,
      path,
    )
  }
}

/**
 * Refuses a WebAuthn provider that carries no flow module: a plain `{ type: 'webauthn' }` object
 * (the core has no WebAuthn code of its own to run it).
 *
 * @throws {ConfigError} naming the import to use.
 */
export function checkProviderFlows(providers: readonly ResolvedProvider[]): void {
  for (const [index, provider] of providers.entries()) {
    if (provider.type === 'webauthn' && providerFlowOf(provider.config) === undefined) {
      throw new ConfigError(
        `config.providers.${index} ("${provider.id}"): a WebAuthn provider comes from its import, not a plain object. Write \`${WEBAUTHN_LINE}\``,
        ['providers', index],
      )
    }
  }
}

/** The flows the configuration's feature modules and provider presets bring, each once. */
export function featureFlowsOf(features: FeatureModules, providers: readonly ResolvedProvider[]): readonly FlowModule[] {
  const flows = new Set<FlowModule>()
  for (const provider of providers) {
    // A preset carries one flow module (WebAuthn) or several (the password flows).
    const carried = providerFlowOf(provider.config) as FlowModule | readonly FlowModule[] | undefined
    for (const flow of carried === undefined ? [] : Array.isArray(carried) ? carried : [carried]) flows.add(flow as FlowModule)
  }
  for (const flow of features.secondFactor?.flows ?? []) flows.add(flow)
  for (const flow of features.stepUp?.flows ?? []) flows.add(flow)
  for (const flow of features.apiKeys?.flows ?? []) flows.add(flow)
  return [...flows]
}
