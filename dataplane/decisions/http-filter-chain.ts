import { compiling, ConfigRejection } from './config-rejection.js';
import type { RequestContext } from './decision-types.js';
import { HTTP_EXT_AUTHZ_TYPE, HTTP_RBAC_FILTER, HTTP_RBAC_TYPE, JWT_AUTHN_TYPE, ROUTER_TYPE, type TypedConfig } from './envoy-types.js';
import type { ExtAuthzConfig } from './ext-authz-config.js';
import { compileExtAuthzHttpFilter } from './ext-authz-filter.js';
import type { ExtAuthzVerdict, HeaderMutation } from './ext-authz-types.js';
import type { DynamicMetadata, HttpRequestFacts } from './facts.js';
import { applyHeaderMutations } from './header-mutation.js';
import { compileJwtAuthn, type JwtAuthenticationConfig, type JwtVerdict } from './jwt-authn.js';
import { compileRbacFilter, type RbacFilterConfig, type RbacVerdict } from './rbac.js';

type HttpStage =
  | { kind: 'jwt'; run: ReturnType<typeof compileJwtAuthn> }
  | { kind: 'rbac'; run: ReturnType<typeof compileRbacFilter> }
  | { kind: 'ext_authz'; run: ReturnType<typeof compileExtAuthzHttpFilter> };

/** Merges what a filter wrote into the dynamic metadata under its name, keeping what earlier ones wrote. */
export function mergeMetadata(metadata: DynamicMetadata, filter: string, written: Readonly<Record<string, unknown>>): DynamicMetadata {
  return { ...metadata, [filter]: { ...metadata[filter], ...written } };
}

/** A request's headers while the filters run: each filter's edits are seen by the next, and kept for the upstream. */
export interface RequestEdits {
  /** The request's own copy (`request.headers`). */
  readonly headers: Record<string, string>;
  readonly headersToSet: Record<string, string>;
  readonly headersToRemove: string[];
}

export type FilterChainOutcome =
  | {
      readonly kind: 'respond';
      readonly status: number;
      readonly body: string;
      readonly by: 'jwt' | 'rbac' | 'ext_authz';
      readonly headers?: Readonly<Record<string, string | readonly string[]>>;
      readonly jwt?: JwtVerdict;
      readonly rbac: RbacVerdict[];
      readonly extAuthz?: ExtAuthzVerdict[];
    }
  | {
      readonly kind: 'continue';
      readonly jwt?: JwtVerdict;
      readonly rbac: RbacVerdict[];
      readonly extAuthz?: ExtAuthzVerdict[];
      readonly metadata: DynamicMetadata;
      readonly responseHeaderMutations: HeaderMutation[];
    };

export interface FilterChainInput {
  readonly request: HttpRequestFacts;
  readonly edits: RequestEdits;
  readonly context: RequestContext;
  /** Whether the chain terminated TLS (this proxy's certificate is then the destination's). */
  readonly terminatesTls: boolean;
  /** The route's target cluster as the request stands (the ext_authz filter's stats scope). */
  readonly statCluster: () => string | undefined;
}

/** The HTTP filters before the router, compiled; anything else is refused unless `is_optional`. */
export function compileHttpFilterChain(where: string, filters: readonly TypedConfig[]): (input: FilterChainInput) => Promise<FilterChainOutcome> {
  const stages: HttpStage[] = [];
  filters.forEach((filter, index) => {
    const field = `http_filters[${index}] (${filter.name})`;
    const type = filter.typed_config?.['@type'];
    const isLast = index === filters.length - 1;
    if (type === ROUTER_TYPE) {
      if (!isLast) throw new ConfigRejection(where, field, 'the router must be the last HTTP filter');
      return;
    }
    if (isLast) throw new ConfigRejection(where, field, 'the last HTTP filter must be the router');
    if (type === JWT_AUTHN_TYPE)
      stages.push({ kind: 'jwt', run: compiling(where, field, () => compileJwtAuthn(filter.typed_config as JwtAuthenticationConfig)) });
    else if (type === HTTP_RBAC_TYPE)
      stages.push({ kind: 'rbac', run: compiling(where, field, () => compileRbacFilter(filter.typed_config as RbacFilterConfig)) });
    else if (type === HTTP_EXT_AUTHZ_TYPE)
      stages.push({ kind: 'ext_authz', run: compiling(where, field, () => compileExtAuthzHttpFilter(filter.typed_config as ExtAuthzConfig)) });
    else if (filter.is_optional !== true) throw new ConfigRejection(where, field, `filter type ${type ?? '(none)'} is not supported`);
  });
  if (filters.length === 0) throw new ConfigRejection(where, 'http_filters', 'the router filter is required');
  const hasExtAuthz = stages.some((stage) => stage.kind === 'ext_authz');

  return async ({ request, edits, context, terminatesTls, statCluster }) => {
    const { headers, headersToSet, headersToRemove } = edits;
    let metadata: DynamicMetadata = {};
    let jwt: JwtVerdict | undefined;
    const rbac: RbacVerdict[] = [];
    const extAuthz: ExtAuthzVerdict[] = [];
    const responseHeaderMutations: HeaderMutation[] = [];
    const reached = (): { jwt?: JwtVerdict; rbac: RbacVerdict[]; extAuthz?: ExtAuthzVerdict[] } => ({
      ...(jwt ? { jwt } : {}),
      rbac,
      ...(hasExtAuthz ? { extAuthz } : {}),
    });
    for (const stage of stages) {
      if (stage.kind === 'jwt') {
        jwt = await stage.run(request, context.now, {
          ...(context.fetchJwks ? { fetchJwks: context.fetchJwks } : {}),
          ...(context.recordedTokens ? { recorded: context.recordedTokens } : {}),
        });
        if (jwt.kind === 'deny') return { kind: 'respond', status: jwt.status, body: jwt.message, by: 'jwt', ...reached() };
        metadata = { ...metadata, 'envoy.filters.http.jwt_authn': { ...jwt.metadata } };
        // `headers` is this request's own copy (`request.headers`): the later filters see the edits.
        Object.assign(headers, jwt.headersToSet);
        for (const name of jwt.headersToRemove) delete headers[name];
        Object.assign(headersToSet, jwt.headersToSet);
        headersToRemove.push(...jwt.headersToRemove);
      } else if (stage.kind === 'rbac') {
        const verdict = stage.run({ connection: context.connection, request, metadata });
        rbac.push(verdict);
        if (verdict.dynamicMetadata) metadata = mergeMetadata(metadata, HTTP_RBAC_FILTER, verdict.dynamicMetadata);
        if (!verdict.allowed) return { kind: 'respond', status: 403, body: 'RBAC: access denied', by: 'rbac', ...reached() };
      } else {
        const cluster = statCluster();
        const step = await stage.run({
          request,
          metadata,
          check: { connection: context.connection, ...(context.localUriSan ? { localUriSan: context.localUriSan } : {}), terminatesTls },
          now: context.now,
          streamId: context.pick,
          ...(context.extAuthz ? { transport: context.extAuthz } : {}),
          ...(context.requestBody ? { readBody: context.requestBody } : {}),
          ...(cluster !== undefined ? { statCluster: cluster } : {}),
        });
        extAuthz.push(step.verdict);
        if (step.kind === 'respond') return { kind: 'respond', status: step.status, body: step.body, by: 'ext_authz', headers: step.headers, ...reached() };
        applyHeaderMutations(headers, step.requestMutations, { joined: true });
        for (const { name } of step.requestMutations) {
          const value = headers[name];
          if (value !== undefined) headersToSet[name] = value;
        }
        for (const name of step.requestRemovals) {
          delete headers[name];
          delete headersToSet[name];
          headersToRemove.push(name);
        }
        responseHeaderMutations.push(...step.responseMutations);
      }
    }
    return { kind: 'continue', ...reached(), metadata, responseHeaderMutations };
  };
}
