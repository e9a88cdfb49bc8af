/**
 * JSON schemas of every route: request validation (compiled once by fastify's ajv at registration)
 * and response serialization (fast-json-stringify, compiled once). The OpenAPI document at
 * GET /openapi.json is generated from these by @fastify/swagger.
 *
 * Response objects that carry runtime data keep `additionalProperties: true`, so a field the runtime
 * adds later reaches clients without a server change; fields listed are serialized fast.
 */
import { ARTIFACT_JSON_SCHEMA, EVENT_SCHEMA_IDS, HOOK_TYPES, MODEL_JSON_SCHEMAS, NAME_PATTERNS } from "../index.js";

const BUNDLE_NAME = NAME_PATTERNS.BUNDLE_NAME.pattern;
const HOOK_NAME = NAME_PATTERNS.HOOK_NAME.pattern;
const SESSION_ID = NAME_PATTERNS.SESSION_ID.pattern;

const object = (properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  additionalProperties: true,
  ...extra,
});
const anyObject = { type: "object", additionalProperties: true } as const;
const stringArray = { type: "array", items: { type: "string" } } as const;
const nullableString = { type: ["string", "null"] } as const;
const trace = { type: "array", items: { $ref: "ChainResult#" } } as const;

/**
 * The model's shapes (Constitution, Rule, RuleConflict, VcpContext, the six events…), generated from
 * the zod model (src/model/json-schema.ts) and registered under their names: request bodies refer to
 * them, never to a hand-written copy, so the server accepts exactly what the runtime accepts, whether
 * or not a hook is installed for the chain (issue 11 defect 3).
 */
export const ModelSchemas = Object.entries(MODEL_JSON_SCHEMAS).map(([id, schema]) => ({ $id: id, ...schema }));
const ref = (id: keyof typeof MODEL_JSON_SCHEMAS) => ({ $ref: `${id}#` }) as const;
const constitutionRef = ref("Constitution");
const contextRef = ref("VcpContext");

export const errorResponse = { $ref: "VcpErrorResponse#" } as const;
const errors = { "4xx": errorResponse, "5xx": errorResponse } as const;

export const HookTypeSchema = { type: "string", enum: [...HOOK_TYPES] } as const;

export const BundleInfoSchema = {
  $id: "BundleInfo",
  ...object({
    bundle: { type: "string" },
    version: { type: "string" },
    digest: { type: "string" },
    trust: { type: "string" },
    hooks: stringArray,
    session_hooks: stringArray,
    activated_at: { type: "string" },
    signed_by: nullableString,
    errors: { type: "array", items: anyObject },
  }),
  required: ["bundle", "version", "digest", "hooks"],
} as const;

export const ResolvedHookSchema = {
  $id: "ResolvedHook",
  ...object({
    name: { type: "string" },
    type: { type: "string" },
    priority: { type: "integer" },
    timeout_ms: { type: "integer" },
    scope: { type: "string" },
    session_id: { type: "string" },
    trust: { type: "string" },
    enabled: { type: "boolean" },
    fail_closed: { type: "boolean" },
    action: anyObject,
    condition: { anyOf: [anyObject, { type: "null" }] },
    metadata: anyObject,
  }),
} as const;

export const HookExecutionSchema = {
  $id: "HookExecution",
  ...object({
    hook: { type: "string" },
    bundle: { type: "string" },
    scope: { type: "string" },
    trust: { type: "string" },
    status: { type: "string" },
    outcome: { type: "string" },
    duration_ms: { type: "number" },
    cpu_ms: { type: "number" },
    reason: { type: "string" },
    annotations: anyObject,
    error: { type: "string" },
    modified_context: { type: "boolean" },
    modified_constitution: { type: "boolean" },
    // Who changed the constitution into what: the only record of it when the constitution is unsigned.
    provenance: { type: "object", additionalProperties: false, required: ["parent_digest", "digest"], properties: { parent_digest: { type: "string" }, digest: { type: "string" } } },
    // Closed: the runtime's audit-only fields (bundle_digest, modification diff) stay out of the
    // v1 wire shape of DESIGN §6.2.
  }, { additionalProperties: false }),
} as const;

export const ChainResultSchema = {
  $id: "ChainResult",
  ...object({
    chain_id: { type: "string" },
    type: { type: "string" },
    status: { type: "string", enum: ["completed", "aborted"] },
    reason: { type: ["string", "null"] },
    aborted_by: { type: ["string", "null"] },
    context: anyObject,
    constitution: anyObject,
    cascade_failure: { type: "boolean" },
    hook_results: { type: "array", items: { $ref: "HookExecution#" } },
    duration_ms: { type: "number" },
  }),
  // Every field is always present; listing them in DESIGN §6.2 order also fixes the wire order.
  required: ["chain_id", "type", "status", "reason", "aborted_by", "context", "constitution", "cascade_failure", "hook_results", "duration_ms"],
} as const;

/**
 * The `.vcpb` artifact (DESIGN §3.2): the outer shape install checks (ARTIFACT_JSON_SCHEMA, generated
 * from bundle/artifact.ts), plus the manifest's `bundle` name, which the route compares with the path
 * before anything else. The rest of the manifest is checked by install, after the digest. An empty
 * `signatures` list passes here: the runtime refuses it with UNSIGNED_BUNDLE, never a schema error.
 */
const artifactShape = ARTIFACT_JSON_SCHEMA as { properties: Record<string, object> };
export const ArtifactSchema = {
  $id: "VcpBundleArtifact",
  ...ARTIFACT_JSON_SCHEMA,
  properties: {
    ...artifactShape.properties,
    manifest: { ...artifactShape.properties["manifest"], required: ["bundle"], properties: { bundle: { type: "string", pattern: BUNDLE_NAME } } },
  },
};

export const SessionViewSchema = {
  $id: "SessionView",
  ...object({
    session_id: { type: "string" },
    owner: { type: ["string", "null"], description: "id of the principal (token) that opened the session" },
    context: anyObject,
    constitution: anyObject,
    state: { type: ["string", "null"] },
    last_known_good: anyObject,
    metadata: anyObject,
    created_at: { type: "string" },
    updated_at: { type: "string" },
    periodic: { type: "array", items: anyObject },
  }),
  required: ["session_id"],
} as const;

/**
 * Output of adapt (DESIGN §4.6). `constitution` and `context` are null unless `outcome` is `inject`:
 * nothing may be injected then (spec §3.1, §3.2); `session_constitution` names the session's own.
 */
export const AdaptOutcomeSchema = {
  $id: "AdaptOutcome",
  ...object({
    outcome: { type: "string", enum: ["inject", "cancelled", "blocked"] },
    constitution: { type: ["object", "null"], additionalProperties: true, description: "inject: the constitution to inject; null otherwise (nothing may be injected)" },
    context: { type: ["object", "null"], additionalProperties: true, description: "inject: the context to inject with; null otherwise" },
    session_constitution: { ...anyObject, description: "the session's constitution after the operation; for cancelled/blocked the unchanged one, not for injection" },
    reason: nullableString,
    aborted_by: nullableString,
    trace,
  }),
  required: ["outcome", "constitution", "context", "session_constitution"],
} as const;

export const SharedSchemas = [
  ...ModelSchemas,
  BundleInfoSchema, ResolvedHookSchema, HookExecutionSchema, ChainResultSchema, ArtifactSchema, SessionViewSchema, AdaptOutcomeSchema,
];

const nameParams = { type: "object", required: ["name"], properties: { name: { type: "string", pattern: BUNDLE_NAME } } } as const;
const sessionParams = { type: "object", required: ["id"], properties: { id: { type: "string", pattern: SESSION_ID } } } as const;
/** Session ids are per owner: an operator names a client's session with `owner` (clients' `owner` is ignored). */
const OWNER = { type: "string", minLength: 1, maxLength: 256, description: "operators: the principal id that opened the session (needed when two owners use the same session id)" } as const;
const ownerQuery = { type: "object", additionalProperties: false, properties: { owner: OWNER } } as const;
const security = (role: "operator" | "client" | "any") => [{ [role === "any" ? "bearer" : role]: [] }];

const contextOverrides = { context: contextRef, constitution: constitutionRef };
/**
 * The event of `POST …/chains/{type}`: its schema depends on the path's type, which a body schema
 * cannot see, so the handler checks it with the runtime's own validator (model/validate-input.ts
 * `assertEvent`, compiled from the same components) before anything runs.
 */
const chainEvent = {
  type: "object",
  description: `the event payload of {type} (spec §4.5): ${HOOK_TYPES.map((t) => `${t} ⇒ ${EVENT_SCHEMA_IDS[t]}`).join(", ")}; checked against that schema even when no hook is installed`,
} as const;

/**
 * Every route's schema names its operation after its key here (`getSession`, `fireChain`, …): the
 * `operationId` that OpenAPI code generators turn into method names, stable across releases.
 */
function withOperationIds<T extends Record<string, object>>(table: T): { readonly [K in keyof T]: T[K] & { readonly operationId: K } } {
  return Object.fromEntries(Object.entries(table).map(([key, schema]) => [key, { ...schema, operationId: key }])) as never;
}

/** Tags of the OpenAPI document, in the order a reader meets them. */
export const OPENAPI_TAGS = [
  { name: "ops", description: "Liveness, readiness, metrics and status" },
  { name: "bundles", description: "Signed policy bundles (operator)" },
  { name: "hooks", description: "Resolved chain order" },
  { name: "sessions", description: "Sessions, owned by the client token that opened them" },
  { name: "events", description: "Hook chains and pipeline operations on a session" },
  { name: "audit", description: "The hash-chained audit log (operator)" },
] as const;

export const routes = withOperationIds({
  healthz: { tags: ["ops"], summary: "Liveness", response: { 200: object({ status: { type: "string" } }) } },
  readyz: {
    tags: ["ops"],
    summary: "Readiness: 200 when chains can run now; 503 while draining or while the sandbox host restarts",
    response: { 200: object({ status: { type: "string" } }), 503: object({ status: { type: "string" } }) },
  },
  metrics: { tags: ["ops"], summary: "Prometheus metrics (text exposition format)", security: security("operator"), response: { 200: { type: "string" }, ...errors } },
  status: {
    tags: ["ops"],
    summary: "Bundles with revision and activation time, per-hook counters and latency, sandbox state",
    security: security("operator"),
    response: { 200: object({ bundles: { type: "array", items: { $ref: "BundleInfo#" } }, hooks: { type: "array", items: anyObject }, registry_revision: { type: "integer" }, sandbox: anyObject, server: anyObject }), ...errors },
  },
  installBundle: {
    tags: ["bundles"],
    summary: "Install or hot-swap a signed bundle (.vcpb)",
    consumes: ["application/vnd.vcp.bundle+json", "application/json"],
    security: security("operator"),
    params: nameParams,
    body: { $ref: "VcpBundleArtifact#" },
    response: { 201: { $ref: "BundleInfo#" }, ...errors },
  },
  listBundles: {
    tags: ["bundles"],
    summary: "Installed bundles",
    security: security("operator"),
    response: { 200: object({ bundles: { type: "array", items: { $ref: "BundleInfo#" } } }), ...errors },
  },
  getBundle: { tags: ["bundles"], summary: "One installed bundle", security: security("operator"), params: nameParams, response: { 200: { $ref: "BundleInfo#" }, ...errors } },
  removeBundle: { tags: ["bundles"], summary: "Remove a bundle and all its hooks", security: security("operator"), params: nameParams, response: { 200: { $ref: "BundleInfo#" }, ...errors } },
  hooks: {
    tags: ["hooks"],
    summary: "The resolved chain order (spec §5.1) for one type, or every type",
    security: security("any"),
    querystring: { type: "object", additionalProperties: false, properties: { type: HookTypeSchema, session: { type: "string", pattern: SESSION_ID }, owner: OWNER } },
    response: { 200: object({ hooks: { type: "array", items: { $ref: "ResolvedHook#" } } }), ...errors },
  },
  openSession: {
    tags: ["sessions"],
    summary: "Open a session",
    security: security("client"),
    body: ref("OpenSessionInput"),
    response: { 201: { $ref: "SessionView#" }, ...errors },
  },
  getSession: { tags: ["sessions"], summary: "A session's state (clients: only sessions they opened, others are 404; operators: any)", security: security("any"), params: sessionParams, querystring: ownerQuery, response: { 200: { $ref: "SessionView#" }, ...errors } },
  closeSession: { tags: ["sessions"], summary: "Close a session and drop its hooks", security: security("any"), params: sessionParams, querystring: ownerQuery, response: { 204: { type: "null" }, ...errors } },
  registerSessionHook: {
    tags: ["sessions"],
    summary: "Register an allowlisted session-scope hook for this session",
    security: security("any"),
    params: sessionParams, querystring: ownerQuery,
    body: { type: "object", required: ["bundle", "hook"], additionalProperties: false, properties: { bundle: { type: "string", pattern: BUNDLE_NAME }, hook: { type: "string", pattern: HOOK_NAME } } },
    response: { 201: { $ref: "ResolvedHook#" }, ...errors },
  },
  fireChain: {
    tags: ["events"],
    summary: "Run the hook chain of one type for one event (no session state change)",
    security: security("any"),
    params: { type: "object", required: ["id", "type"], properties: { id: sessionParams.properties.id, type: HookTypeSchema } },
    querystring: ownerQuery,
    body: { type: "object", required: ["event"], additionalProperties: false, properties: { ...contextOverrides, event: chainEvent } },
    response: { 200: { $ref: "ChainResult#" }, ...errors },
  },
  adapt: {
    tags: ["events"],
    summary: "post_select then pre_inject: the constitution to inject, or why not",
    security: security("any"),
    params: sessionParams, querystring: ownerQuery,
    body: ref("AdaptInput"),
    response: { 200: { $ref: "AdaptOutcome#" }, ...errors },
  },
  transition: {
    tags: ["events"],
    summary: "on_transition before the state changes; abort keeps the previous state",
    security: security("any"),
    params: sessionParams, querystring: ownerQuery,
    body: ref("TransitionInput"),
    response: {
      200: object(
        { outcome: { type: "string", enum: ["transitioned", "blocked"] }, state: nullableString, previous_state: nullableString, context: anyObject, reason: nullableString, aborted_by: nullableString, trace, adaptation: { $ref: "AdaptOutcome#" } },
        { required: ["outcome"] },
      ),
      ...errors,
    },
  },
  conflict: {
    tags: ["events"],
    summary: "on_conflict: a modify resolves; none ⇒ the configured strategy; abort ⇒ last known-good",
    security: security("any"),
    params: sessionParams, querystring: ownerQuery,
    body: ref("ConflictInput"),
    response: {
      200: object(
        { outcome: { type: "string", enum: ["resolved", "default", "failed"] }, constitution: anyObject, strategy: { type: "string" }, dropped_rules: stringArray, reason: nullableString, aborted_by: nullableString, trace },
        { required: ["outcome"] },
      ),
      ...errors,
    },
  },
  violation: {
    tags: ["events"],
    summary: "on_violation before any default response",
    security: security("any"),
    params: sessionParams, querystring: ownerQuery,
    body: ref("ViolationInput"),
    response: {
      200: object(
        {
          outcome: { type: "string", enum: ["deliver", "suppress", "retry", "corrected"] },
          output: { ...nullableString, description: "deliver/corrected: what may be delivered; null for suppress and retry (deliver nothing)" },
          context: { type: ["object", "null"], additionalProperties: true, description: "retry: the context to regenerate with; null otherwise" },
          retry_count: { type: "integer" },
          reason: nullableString,
          aborted_by: nullableString,
          trace,
        },
        { required: ["outcome", "output", "context"] },
      ),
      ...errors,
    },
  },
  audit: {
    tags: ["audit"],
    summary: "Audit records, oldest first",
    security: security("operator"),
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: { session: { type: "string", pattern: SESSION_ID }, owner: OWNER, since: { type: "integer", minimum: 0, description: "return records with seq > since" }, limit: { type: "integer", minimum: 1, maximum: 10000, default: 100 } },
    },
    response: { 200: object({ records: { type: "array", items: anyObject } }), ...errors },
  },
  auditHead: {
    tags: ["audit"],
    summary: "The audit log's head (seq and hash) for anchoring",
    security: security("operator"),
    response: { 200: object({ seq: { type: "integer" }, hash: { type: "string" } }, { required: ["seq", "hash"] }), ...errors },
  },
} as const);
