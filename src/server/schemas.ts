/**
 * JSON schemas of every route: request validation (compiled once by fastify's ajv at registration)
 * and response serialization (fast-json-stringify, compiled once). The OpenAPI document at
 * GET /openapi.json is generated from these by @fastify/swagger.
 *
 * Response objects that carry runtime data keep `additionalProperties: true`, so a field the runtime
 * adds later reaches clients without a server change; fields listed are serialized fast.
 */
import { ARTIFACT_JSON_SCHEMA, DECISION_OUTCOMES, DEFAULT_DECISION_LIMIT, EVENT_SCHEMA_IDS, HOOK_TYPES, MAX_DECISION_LIMIT, MODEL_JSON_SCHEMAS, NAME_PATTERNS, OUTCOMES } from "../index.js";
import { errorStatuses } from "./errors.js";

const BUNDLE_NAME = NAME_PATTERNS.BUNDLE_NAME.pattern;
const HOOK_NAME = NAME_PATTERNS.HOOK_NAME.pattern;
const SESSION_ID = NAME_PATTERNS.SESSION_ID.pattern;
const DIGEST = NAME_PATTERNS.DIGEST.pattern;

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
/** Statuses any route can answer: an unexpected error, draining (SHUTTING_DOWN), an overloaded or restarting sandbox. */
const ALWAYS = [500, 503] as const;
/**
 * The error responses of a route: each status it can answer, with `VcpError<status>` whose `code` is
 * the enum of the codes of that status (generated from the one error table, src/server/errors.ts).
 * A status no code maps to is a mistake here, refused when the module loads.
 */
function errors(...statuses: number[]): Record<number, { $ref: string }> {
  const known = new Set(errorStatuses());
  const out: Record<number, { $ref: string }> = {};
  for (const status of [...statuses, ...ALWAYS].sort((a, b) => a - b)) {
    if (!known.has(status)) throw new Error(`schemas: no error code answers with HTTP ${status}`);
    out[status] = { $ref: `VcpError${status}#` };
  }
  return out;
}
/** Authenticated routes: no or a wrong token (401), a token of the other role (403). */
const AUTH = [401, 403] as const;
/** Routes with a JSON body: schema failure (400), too large (413), not JSON (415). */
const BODY = [400, 413, 415] as const;
/** Routes on one session: bad id (400), not open or not the caller's (404), ambiguous owner (409). */
const SESSION = [400, 404, 409] as const;

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
    profile: { type: "string" },
  }),
  required: ["bundle", "version", "digest", "hooks"],
} as const;

/** The answer of PUT /v1/bundles/{name}: the bundle's info and whether the upload changed anything. */
const installed = {
  ...object({
    ...BundleInfoSchema.properties,
    unchanged: { type: "boolean", description: "true: the uploaded digest was already installed, nothing changed (200); false: a new revision is live (201)" },
    replicas: {
      ...object(
        {
          accepted: { ...stringArray, description: "replica ids that run this revision (this one included)" },
          refused: { type: "array", items: object({ replica: { type: "string" }, code: { type: "string" }, message: { type: "string" } }, { required: ["replica", "code", "message"] }), description: "replicas that refused it, e.g. SIGNATURE_INVALID when their keyring does not trust its signer; each is not ready until it runs the active revision" },
          pending: { ...stringArray, description: "live replicas that had said neither within store.upload_wait_ms" },
        },
        { required: ["accepted", "refused", "pending"] },
      ),
      description: "Only with store.kind redis: what every live replica did with this revision, collected for up to store.upload_wait_ms",
    },
  }),
  required: [...BundleInfoSchema.required, "unchanged"],
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
    // Every hook is keyed by (profile, event): a VCP hook is profile "vcp", its event its type.
    profile: { type: "string", description: "the hook system: vcp, or an event profile's id" },
    event: { type: "string", description: "the profile's event (a VCP hook: its type)" },
    bundle: { type: "string", description: "the bundle the hook comes from" },
    matcher: nullableString,
    sequential: { type: "boolean" },
    // repo-yaml (PROFILES §8.8): the definition's `match` filters as written, and `blocking`.
    match: { anyOf: [anyObject, { type: "null" }] },
    blocking: { type: "boolean" },
    deduplicated_by: nullableString,
    // The command lane (PROFILES §6): an exec hook's pinned command; null for a sandboxed hook.
    exec: { anyOf: [object({ command: { type: "string" }, sha256: { type: "string" }, shell: { type: "boolean" } }), { type: "null" }] },
  }),
} as const;

/** What every hook execution carries, VCP and event-profile chains alike. */
const HOOK_EXECUTION_COMMON = {
  hook: { type: "string" },
  bundle: { type: "string" },
  scope: { type: "string" },
  trust: { type: "string" },
  bundle_digest: { type: "string", description: "digest of the bundle revision whose hook ran (or was skipped)" },
  status: { type: "string" },
  outcome: {
    type: "string",
    enum: [...OUTCOMES],
    description:
      "ok, or why not: skipped_predicate (its condition did not match), skipped_disabled (disabled, e.g. after a cascading failure), skipped_deadline (the chain deadline was spent before its turn), skipped_matcher (an event-profile matcher did not match), deduplicated (an identical definition ran in its place), deadline_exhausted (an event-profile class deadline, e.g. ai-memory's, was spent before its turn; a fail_closed hook then contributes the profile's refusal) — a skipped hook never ran; exec_nonzero / exec_signal (an exec hook's script exited with a code its profile reads as an error, or a signal ended it); the other outcomes are failures treated as continue unless fail_closed",
  },
  duration_ms: { type: "number" },
  cpu_ms: { type: "number" },
  reason: { type: "string" },
} as const;

export const HookExecutionSchema = {
  $id: "HookExecution",
  ...object({
    ...HOOK_EXECUTION_COMMON,
    annotations: anyObject,
    error: { type: "string" },
    modified_context: { type: "boolean" },
    modified_constitution: { type: "boolean" },
    // Who changed the constitution into what: the only record of it when the constitution is unsigned.
    provenance: { type: "object", additionalProperties: false, required: ["parent_digest", "digest"], properties: { parent_digest: { type: "string" }, digest: { type: "string" } } },
    // Closed: the modification diff is audit-only and stays out of the v1 wire shape of DESIGN §6.2.
  }, { additionalProperties: false }),
} as const;

/** The decision record of one chain (src/chain/decision.ts, docs/decisions.md). */
export const DecisionSchema = {
  $id: "Decision",
  description: "One chain's decision: its effect, the hook that decided it and why, what it was about, per-hook outcomes and which hook changed which field. Texts are redacted (secret shapes) and bounded",
  ...object({
    chain_id: { type: "string" },
    at: { type: "string", format: "date-time", description: "chain start" },
    profile: { type: "string", description: "the event profile (e.g. gemini-cli); vcp for VCP chains" },
    event: { type: "string", description: "the profile's event (e.g. BeforeTool); for VCP the hook type (e.g. pre_inject)" },
    outcome: { type: "string", enum: [...DECISION_OUTCOMES] },
    errors: { type: "integer", minimum: 0, description: "hooks that failed (threw, timed out, invalid output, crashed, refused)" },
    decided_by: {
      type: ["object", "null"],
      additionalProperties: true,
      required: ["hook", "bundle", "revision"],
      properties: { hook: { type: "string" }, bundle: { type: "string" }, revision: { ...nullableString, description: "digest of the bundle revision that ran the hook" } },
      description: "the decisive hook: the one that blocked, asked or made the last change; null for an allow",
    },
    reason: { ...nullableString, description: "the decisive hook's reason (VCP: the chain's), redacted, at most 1000 characters" },
    subject: object({
      kind: { type: "string", enum: ["tool", "prompt", "vcp", "event"] },
      tool: { type: "string" },
      command: { type: "string" },
      path: { type: "string" },
      prompt_sha256: { type: "string", description: "hex SHA-256 of the prompt; the prompt itself is never recorded" },
      vcp_type: { type: "string" },
      summary: { type: "string", maxLength: 200, description: "one line: what a console row shows" },
    }, { required: ["kind", "summary"] }),
    hooks: {
      type: "array",
      items: object({
        hook: { type: "string" }, bundle: { type: "string" }, outcome: { type: "string", enum: [...OUTCOMES] },
        verdict: { type: "string", enum: ["allow", "block", "modify", "ask", "observe"] }, duration_ms: { type: "number" }, reason: { type: "string" },
      }, { required: ["hook", "bundle", "outcome", "duration_ms"] }),
    },
    changes: {
      type: "array",
      items: object({ hook: { type: "string" }, op: { type: "string", enum: ["replace", "add", "remove"] }, path: { type: "string", description: "RFC 6902 path" } }, { required: ["hook", "op", "path"] }),
    },
    changes_omitted: { type: "integer", description: "changes left out over the record's bound" },
    hooks_omitted: { type: "integer", description: "hooks left out to keep the audit record within audit.max_chain_bytes" },
    session: nullableString,
    client: { ...nullableString, description: "the principal id that fired the chain; null for the embedding application" },
  }),
  required: ["chain_id", "at", "profile", "event", "outcome", "errors", "decided_by", "reason", "subject", "hooks", "changes", "session", "client"],
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
    decision: { $ref: "Decision#" },
  }),
  // Every field is always present (but `decision`, absent when no hook applied); listing them in DESIGN §6.2 order also fixes the wire order.
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

/** The chain behind a profile answer (fire/profile.ts ProfileChainResult). */
export const ProfileChainResultSchema = {
  $id: "ProfileChainResult",
  ...object({
    chain_id: { type: "string" },
    profile: { type: "string" },
    event: { type: "string" },
    mode: { type: "string", enum: ["sequential", "parallel"] },
    status: { type: "string", enum: ["completed", "aborted"] },
    aborted_by: nullableString,
    hook_results: {
      type: "array",
      items: object({
        ...HOOK_EXECUTION_COMMON, error: { type: "string" }, verdict: { type: "string" }, stripped: stringArray,
        // The command lane (PROFILES §6): an exec hook ran outside the sandbox.
        sandboxed: { type: "boolean", enum: [false], description: "present (false) only on exec hooks: the hook ran a pinned script outside the sandbox" },
        exec: object({
          command_sha256: { type: "string" },
          exit_code: { type: ["integer", "null"] },
          signal: nullableString,
          duration_ms: { type: "number" },
          timed_out: { type: "boolean" },
          truncated: { type: "boolean" },
          error_code: { type: "string", description: "why the script was not started (EXEC_HASH_MISMATCH, EXEC_SPAWN_FAILED, …)" },
        }),
      }),
    },
    duration_ms: { type: "number" },
  }),
} as const;

/** An approval of an Amplifier `ask_user` answer (PROFILES §8.9, src/pipeline/approvals.ts). */
export const ApprovalSchema = {
  $id: "Approval",
  ...object({
    id: { type: "string" },
    session: { type: "string" },
    owner: nullableString,
    profile: { type: "string" },
    event: { type: "string" },
    chain_id: nullableString,
    hook: { type: "string" },
    prompt: { type: "string", description: "The hook's text, clipped to 4,096 characters (`prompt_truncated`); `GET /v1/approvals/{id}?full=1` has it whole while pending. Show it as text, never as markup" },
    prompt_sha256: { type: "string", description: "Hex SHA-256 of the full prompt: what \"allow always\" remembers" },
    prompt_chars: { type: "integer", description: "Length of the full prompt (UTF-16 code units)" },
    prompt_truncated: { type: "boolean", description: "`prompt` is not the whole prompt" },
    options: stringArray,
    input: { type: "string", description: "What the agent asked to do, as JSON text (Amplifier: `{\"tool_name\", \"tool_input\"}` of the event), redacted like the audit log (`redact_keys`, secret shapes) and cut at 16,384 characters (`input_truncated`). Absent when the event names no tool. Show it as text, never as markup" },
    input_truncated: { type: "boolean", description: "`input` was cut at 16,384 characters (it is then not valid JSON)" },
    default: { type: "string", enum: ["allow", "deny"] },
    timeout_s: { type: "number" },
    created_at: { type: "string" },
    expires_at: { type: "string" },
    state: { type: "string", enum: ["pending", "granted", "denied", "expired"] },
    decision: { type: "string" },
    decided_by: { type: "string", description: "The principal that decided; `timeout` when it expired; `allow_always` when the session's cache granted it" },
    decided_at: { type: "string" },
  }),
  required: ["id", "session", "hook", "prompt", "options", "default", "expires_at", "state"],
} as const;

export const SharedSchemas = [
  ...ModelSchemas,
  BundleInfoSchema, ResolvedHookSchema, HookExecutionSchema, DecisionSchema, ChainResultSchema, ProfileChainResultSchema, ArtifactSchema, SessionViewSchema, AdaptOutcomeSchema,
  ApprovalSchema,
];

const nameParams = { type: "object", required: ["name"], properties: { name: { type: "string", pattern: BUNDLE_NAME } } } as const;
const revisionParams = { type: "object", required: ["name", "digest"], properties: { name: { type: "string", pattern: BUNDLE_NAME }, digest: { type: "string", pattern: DIGEST } } } as const;
const revisionShape = {
  version: { type: "string" },
  digest: { type: "string" },
  signed_by: { type: ["string", "null"], description: "key id of the verifying signature; null for an unsigned bundle" },
  activated_at: { type: "string", description: "when this revision became active" },
  active: { type: "boolean", description: "the revision chains run now" },
} as const;
const sessionParams = { type: "object", required: ["id"], properties: { id: { type: "string", pattern: SESSION_ID } } } as const;
/** Session ids are per owner: an operator names a client's session with `owner` (clients' `owner` is ignored). */
const OWNER = { type: "string", minLength: 1, maxLength: 256, description: "operators: the principal id that opened the session (needed when two owners use the same session id)" } as const;
const ownerQuery = { type: "object", additionalProperties: false, properties: { owner: OWNER } } as const;
/** One requirement per role that may call (OpenAPI: any one of them suffices). */
const security = (...roles: Array<"operator" | "client" | "approver" | "any">) => roles.map((role) => ({ [role === "any" ? "bearer" : role]: [] }));

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
 * The `event` as the OpenAPI document shows it: one of the model's six event schemas, so a generated
 * client can build one. Document only (see {@link documentRouteSchema}): validation stays with the
 * handler, which knows the path's `{type}` and names the exact field that is wrong.
 */
const chainEventDocumented = {
  anyOf: HOOK_TYPES.map((t) => ({ $ref: `${EVENT_SCHEMA_IDS[t]}#` })),
  description: chainEvent.description,
} as const;

/**
 * A route's schema as published in GET /openapi.json (@fastify/swagger `transform`): the same
 * schema, except where the document can say more than request validation can check.
 */
export function documentRouteSchema(schema: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
  if (schema === undefined || schema["operationId"] !== routes.fireChain.operationId) return schema === undefined ? undefined : { ...schema };
  const body = routes.fireChain.body;
  return { ...schema, body: { ...body, properties: { ...body.properties, event: chainEventDocumented } } };
}

/**
 * Every route's schema names its operation after its key here (`getSession`, `fireChain`, …): the
 * `operationId` that OpenAPI code generators turn into method names, stable across releases.
 */
function withOperationIds<T extends Record<string, object>>(table: T): { readonly [K in keyof T]: T[K] & { readonly operationId: K } } {
  return Object.fromEntries(Object.entries(table).map(([key, schema]) => [key, { ...schema, operationId: key }])) as never;
}

/** `POST /v1/hooks/{name}/enable|disable`: one hook's switch (spec §7.3.4), deployment-wide or in one session. */
function switchHook(enabled: boolean) {
  return {
    tags: ["hooks"],
    summary: `Switch a hook ${enabled ? "on" : "off"} (spec §7.3.4), e.g. ${enabled ? "after a cascade disabled it" : "a failing one"}: deployment-wide (operators), or with session in that session only — its session hook of the name, else the deployment hook there (operators). It holds until switched again, on every replica (store.kind redis)`,
    security: security("any"),
    params: { type: "object", required: ["name"], properties: { name: { type: "string", pattern: HOOK_NAME } } },
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        session: { type: "string", pattern: SESSION_ID, description: "switch it in this session only (clients: their own sessions)" },
        owner: OWNER,
        scope: { type: "string", enum: ["deployment", "session"], description: "with session: which hook of the name (default: the session's own, else the deployment hook)" },
      },
    },
    response: { 200: { $ref: "ResolvedHook#" }, ...errors(...AUTH, ...SESSION, 429) },
  } as const;
}

/** Tags of the OpenAPI document, in the order a reader meets them. */
export const OPENAPI_TAGS = [
  { name: "ops", description: "Liveness, readiness, metrics and status" },
  { name: "bundles", description: "Signed policy bundles (operator)" },
  { name: "hooks", description: "Resolved chain order, and each hook's switch" },
  { name: "sessions", description: "Sessions, owned by the client token that opened them" },
  { name: "events", description: "Hook chains and pipeline operations on a session" },
  { name: "audit", description: "The hash-chained audit log (operator)" },
  { name: "profiles", description: "Event profiles: other agents' hook systems (Gemini CLI, LLxprt, Claude Code…) on the same sandbox" },
  { name: "approvals", description: "Amplifier ask_user approvals: pending until the session's owner or an operator decides, or the timeout applies the default" },
] as const;



export const routes = withOperationIds({
  healthz: { tags: ["ops"], summary: "Liveness", security: [], response: { 200: object({ status: { type: "string" } }), ...errors() } },
  readyz: {
    tags: ["ops"],
    summary: "Readiness: 200 when chains can run now; 503 while draining, while the sandbox host restarts, or (store.kind redis) while Redis has not answered this replica for store.unreachable_after_ms or this replica refuses the active revision of a bundle",
    security: [],
    // 503 is either "not ready" ({ status, reason? }) or, once draining has begun, the SHUTTING_DOWN error.
    response: {
      200: object({ status: { type: "string" } }),
      500: { $ref: "VcpError500#" },
      503: { anyOf: [object({ status: { type: "string", enum: ["draining", "sandbox_starting", "store_unreachable", "revision_refused"] }, reason: { type: "string" } }, { required: ["status"] }), { $ref: "VcpError503#" }] },
    },
  },
  metrics: { tags: ["ops"], summary: "Prometheus metrics (text exposition format)", description: "An operator token, or a metrics token (which reads this route and nothing else).", security: [...security("operator"), { metrics: [] }], response: { 200: { description: "Prometheus text exposition format 0.0.4", content: { "text/plain": { schema: { type: "string" } } } }, ...errors(...AUTH) } },
  status: {
    tags: ["ops"],
    summary: "Bundles with revision and activation time, per-hook counters and latency, sandbox state",
    security: security("operator"),
    response: { 200: object({ bundles: { type: "array", items: { $ref: "BundleInfo#" } }, hooks: { type: "array", items: anyObject }, registry_revision: { type: "integer" }, sandbox: anyObject, store: { ...anyObject, description: "Where shared state lives: { kind: local }, or with Redis this replica (replica_id, config_version, connection, warnings), its shared bundle revision (bundles.revision, desired_revision, refused) and every replica of the prefix (replicas[]: id, live, revision, bundles, refused, config_version, version)" }, server: anyObject }), ...errors(...AUTH) },
  },
  installBundle: {
    tags: ["bundles"],
    summary: "Install or hot-swap a signed bundle (.vcpb): 201 when a new revision is live, 200 with unchanged: true when this digest was already the installed one",
    consumes: ["application/vnd.vcp.bundle+json", "application/json"],
    security: security("operator"),
    params: nameParams,
    body: { $ref: "VcpBundleArtifact#" },
    response: {
      201: { description: "installed: this revision is now live (unchanged: false)", ...installed },
      200: { description: "this digest was already the installed revision: nothing changed (unchanged: true)", ...installed },
      ...errors(...AUTH, ...BODY, 409),
    },
  },
  listBundles: {
    tags: ["bundles"],
    summary: "Installed bundles",
    security: security("operator"),
    response: { 200: object({ bundles: { type: "array", items: { $ref: "BundleInfo#" } } }), ...errors(...AUTH) },
  },
  getBundle: { tags: ["bundles"], summary: "One installed bundle", security: security("operator"), params: nameParams, response: { 200: { $ref: "BundleInfo#" }, ...errors(...AUTH, 400, 404) } },
  removeBundle: { tags: ["bundles"], summary: "Remove a bundle and all its hooks", security: security("operator"), params: nameParams, response: { 200: { $ref: "BundleInfo#" }, ...errors(...AUTH, 400, 404) } },
  listBundleRevisions: {
    tags: ["bundles"],
    summary: "The revisions the server keeps of a bundle (the active one and the last few before it), newest first: what a roll back can return to",
    security: security("operator"),
    params: nameParams,
    response: { 200: object({ bundle: { type: "string" }, revisions: { type: "array", items: object(revisionShape) } }), ...errors(...AUTH, 400, 404) },
  },
  getBundleRevision: {
    tags: ["bundles"],
    summary: "One kept revision of a bundle with its manifest (to compare two revisions); 404 UNKNOWN_REVISION when it is not kept",
    security: security("operator"),
    params: revisionParams,
    response: { 200: object({ ...revisionShape, manifest: { type: "object", additionalProperties: true } }), ...errors(...AUTH, 400, 404) },
  },
  rollbackBundle: {
    tags: ["bundles"],
    summary: "Make a kept revision of a bundle active again (verified again like an upload, downgrade allowed)",
    security: security("operator"),
    params: nameParams,
    body: { type: "object", required: ["digest"], additionalProperties: false, properties: { digest: { type: "string", pattern: DIGEST } } },
    response: { 201: { $ref: "BundleInfo#" }, 200: { description: "this digest was already the active revision: nothing changed", $ref: "BundleInfo#" }, ...errors(...AUTH, ...BODY, 404, 409) },
  },
  hooks: {
    tags: ["hooks"],
    summary: "Every hook of the registry, keyed by (profile, event), in the order each chain runs it: the VCP chains (profile vcp, event = type) then each enabled profile's plans; filters profile, event, bundle, type combine, each alone valid",
    security: security("any"),
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        type: { ...HookTypeSchema, description: "VCP hooks of this type only (event-profile hooks have no type)" },
        session: { type: "string", pattern: SESSION_ID, description: "the VCP chains of this session (its session hooks included)" },
        owner: OWNER,
        profile: { type: "string", maxLength: 100, description: "an enabled profile (name or name@version; vcp for the VCP hooks); any other is 400 INVALID_REQUEST naming it" },
        event: { type: "string", maxLength: 128, description: "an event of that profile, or without profile of any enabled one (a VCP type is vcp's event); an event no selected profile has is 400 INVALID_REQUEST naming it" },
        bundle: { type: "string", maxLength: 128, description: "only the hooks of this bundle" },
      },
    },
    response: { 200: object({ hooks: { type: "array", items: { $ref: "ResolvedHook#" } } }), ...errors(...AUTH, 400, 404, 409) },
  },
  enableHook: switchHook(true),
  disableHook: switchHook(false),
  listProfiles: {
    tags: ["profiles"],
    summary: "The enabled event profiles: id, pinned version, upstream commit, events, strict",
    security: security("any"),
    response: {
      200: object({
        profiles: {
          type: "array",
          items: object({
            id: { type: "string" },
            version: { type: "string" },
            upstream: object({ repo: { type: "string" }, commit: { type: "string" } }),
            events: stringArray,
            strict: { type: "boolean" },
            execution: { type: "string" },
            ordering: { type: "string" },
            settings: { ...anyObject, description: "The deployment's settings of the profile (e.g. ai-memory required_events)" },
          }),
        },
      }),
      ...errors(...AUTH),
    },
  },
  fireProfileEvent: {
    tags: ["profiles"],
    summary: "One event of an agent's hook system: the native input JSON in, the merged native answer out (with ?answer=native, the native JSON alone and X-VCP-Exit-Code)",
    security: security("client"),
    params: { type: "object", required: ["profile", "event"], properties: { profile: { type: "string", maxLength: 100 }, event: { type: "string", maxLength: 128 } } },
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        answer: { type: "string", enum: ["envelope", "native"] },
        wait_approval: { type: "integer", enum: [0, 1], description: "1: an Amplifier ask_user answer waits for its approval's decision (or the default at the timeout) and answers the decided continue / deny" },
      },
    },
    headers: {
      type: "object",
      properties: {
        "x-vcp-hook-env": {
          type: "string",
          maxLength: 8192,
          description: "The agent's hook environment for the event's exec hooks (docs/agent-env.md): NAME=VALUE pairs joined by \"&\", each VALUE UTF-8 percent-encoded; only the profile's documented variables (e.g. CLAUDE_PROJECT_DIR), at most 16, each value at most 4096 bytes",
        },
      },
    },
    body: { description: "The agent's native input JSON (what its command hook reads on stdin)" },
    response: {
      200: object({
        native: anyObject,
        exit_code: { type: "integer", enum: [0, 1, 2] },
        stderr: { type: "string" },
        result: { $ref: "ProfileChainResult#" },
        guard: object({
          revisions: { type: "string", pattern: "^[0-9a-f]{64}$", description: "sha256 hex of the profile's installed bundles as `bundle@digest` lines, sorted, joined by \"\\n\"" },
          fail_closed_events: { ...stringArray, description: "The profile's events an enabled fail_closed hook (or repo-yaml blocking hook) guards, sorted: an adapter blocks these when the server cannot answer" },
        }, { required: ["revisions", "fail_closed_events"], additionalProperties: false }),
        refused: object({
          code: { type: "string", description: "The error code the request would have been refused with" },
          message: { type: "string" },
        }, { required: ["code", "message"], additionalProperties: false, description: "Only when a refused request of a guarded event was answered by the profile's blocking answer (exit_code 2)" }),
        // Any JSON, not a $ref: with ?answer=native this schema serializes the native object, whose own
        // `decision` is a string (Gemini, Claude Code). In the envelope it is always a Decision object.
        decision: { description: "The envelope: the chain's decision record (a Decision object, see components.schemas.Decision); absent when no hook applied. With ?answer=native the native answer's own field" },
        unknown_event: { type: "boolean", enum: [true], description: "Only for an event newer than the profile (e.g. one Claude Code added after the pinned version): answered with the neutral answer (exit_code 0), no hook run, audited as unknown_event" },
      }, {
        // No `required` here: with ?answer=native this schema serializes the native object itself.
        description: "The envelope (native, exit_code, result and guard always); with ?answer=native the native JSON object alone, with the X-VCP-* headers. A request refused after authentication (too large, not JSON, too deep, over a bound …) for an event a fail_closed hook guards is answered 200 with the profile's blocking answer, exit code 2 and `refused`",
        headers: {
          "X-VCP-Exit-Code": { type: "string", enum: ["0", "1", "2"], description: "?answer=native: the exit code of the native answer" },
          "X-VCP-Guard-Revisions": { type: "string", description: "?answer=native: guard.revisions" },
          "X-VCP-Fail-Closed-Events": { type: "string", description: "?answer=native: guard.fail_closed_events joined by \",\" (empty when none)" },
          "X-VCP-Stderr": { type: "string", description: "?answer=native, when the answer has stderr: that text redacted, control characters but newlines spelled out, at most 4096 characters, percent-encoded (the sh adapter prints it)" },
        },
      }),
      ...errors(...AUTH, ...BODY, 404, 429),
    },
  },
  listApprovals: {
    tags: ["approvals"],
    summary: "Approvals, oldest first: a client's token sees those of its own sessions, an approver's those of the clients it approves for, an operator's all",
    security: security("any", "approver"),
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: { session: { type: "string", pattern: SESSION_ID }, state: { type: "string", enum: ["pending", "granted", "denied", "expired"] } },
    },
    response: { 200: object({ approvals: { type: "array", items: { $ref: "Approval#" } } }), ...errors(...AUTH, 400) },
  },
  getApproval: {
    tags: ["approvals"],
    summary: "One approval (another client's is 404, like a missing one); `full=1`: the whole prompt while it is pending",
    security: security("any", "approver"),
    params: { type: "object", required: ["id"], properties: { id: { type: "string", minLength: 1, maxLength: 64 } } },
    querystring: { type: "object", additionalProperties: false, properties: { full: { type: "integer", enum: [0, 1], description: "1: `prompt` is the whole prompt (kept while pending, up to 65,536 characters; `prompt_truncated` says whether even that is cut)" } } },
    response: { 200: { $ref: "Approval#" }, ...errors(...AUTH, 404) },
  },
  decideApproval: {
    tags: ["approvals"],
    summary: "Decide a pending approval (operator or approver token; a client's is 403: its agent asked): allow, allow once, allow always (any case) grant; anything else denies. Decided or expired: 409, the first decision stands",
    security: security("operator", "approver"),
    params: { type: "object", required: ["id"], properties: { id: { type: "string", minLength: 1, maxLength: 64 } } },
    body: { type: "object", required: ["decision"], additionalProperties: false, properties: { decision: { type: "string", minLength: 1, maxLength: 256 } } },
    response: { 200: { $ref: "Approval#" }, ...errors(...AUTH, ...BODY, 404, 409) },
  },
  streamApprovals: {
    tags: ["approvals"],
    summary: "Server-sent events: `new`, `decided` and `expired` approvals (a client's token: its own sessions'); the pending ones first, heartbeats while idle; `end` (slow_consumer) before a reader that fell limits.stream_buffer_bytes behind is disconnected. At most limits.streams_per_principal streams per token (429 STREAM_LIMIT)",
    security: security("any", "approver"),
    querystring: { type: "object", additionalProperties: false, properties: { session: { type: "string", pattern: SESSION_ID } } },
    response: { 200: { description: "text/event-stream", content: { "text/event-stream": { schema: { type: "string" } } } }, ...errors(...AUTH, 400, 429) },
  },
  openSession: {
    tags: ["sessions"],
    summary: "Open a session",
    security: security("client"),
    body: ref("OpenSessionInput"),
    response: { 201: { $ref: "SessionView#" }, ...errors(...AUTH, ...BODY, 409, 429) },
  },
  getSession: { tags: ["sessions"], summary: "A session's state (clients: only sessions they opened, others are 404; operators: any)", security: security("any"), params: sessionParams, querystring: ownerQuery, response: { 200: { $ref: "SessionView#" }, ...errors(...AUTH, ...SESSION) } },
  closeSession: { tags: ["sessions"], summary: "Close a session and drop its hooks", security: security("any"), params: sessionParams, querystring: ownerQuery, response: { 204: { type: "null" }, ...errors(...AUTH, ...SESSION) } },
  registerSessionHook: {
    tags: ["sessions"],
    summary: "Register an allowlisted session-scope hook for this session",
    security: security("any"),
    params: sessionParams, querystring: ownerQuery,
    body: { type: "object", required: ["bundle", "hook"], additionalProperties: false, properties: { bundle: { type: "string", pattern: BUNDLE_NAME }, hook: { type: "string", pattern: HOOK_NAME } } },
    response: { 201: { $ref: "ResolvedHook#" }, ...errors(...AUTH, ...BODY, ...SESSION, 429) },
  },
  fireChain: {
    tags: ["events"],
    summary: "Run the hook chain of one type for one event (no session state change)",
    security: security("any"),
    params: { type: "object", required: ["id", "type"], properties: { id: sessionParams.properties.id, type: HookTypeSchema } },
    querystring: ownerQuery,
    body: { type: "object", required: ["event"], additionalProperties: false, properties: { ...contextOverrides, event: chainEvent } },
    response: { 200: { $ref: "ChainResult#" }, ...errors(...AUTH, ...BODY, ...SESSION) },
  },
  adapt: {
    tags: ["events"],
    summary: "post_select then pre_inject: the constitution to inject, or why not",
    security: security("any"),
    params: sessionParams, querystring: ownerQuery,
    body: ref("AdaptInput"),
    response: { 200: { $ref: "AdaptOutcome#" }, ...errors(...AUTH, ...BODY, ...SESSION) },
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
      ...errors(...AUTH, ...BODY, ...SESSION),
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
      ...errors(...AUTH, ...BODY, ...SESSION),
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
      ...errors(...AUTH, ...BODY, ...SESSION),
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
    response: { 200: object({ records: { type: "array", items: anyObject } }), ...errors(...AUTH, 400, 404) },
  },
  listDecisions: {
    tags: ["audit"],
    summary: "Decision records read back from the audit log, newest first (clients: only chains they fired; operators: all)",
    description: "Reads the audit log (rotated segments too) backwards, at most 64 MiB per request: a page that stops there has fewer than `limit` decisions and a `next_cursor` to go on from. Chains recorded before decision records existed are not listed.",
    security: security("operator", "client"),
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        since: { type: "string", minLength: 1, maxLength: 40, description: "ISO-8601 time or epoch milliseconds: chains started at or after it" },
        until: { type: "string", minLength: 1, maxLength: 40, description: "ISO-8601 time or epoch milliseconds: chains started at or before it" },
        outcome: { type: "string", enum: [...DECISION_OUTCOMES] },
        bundle: { type: "string", pattern: BUNDLE_NAME, description: "a hook of this bundle ran in the chain" },
        profile: { type: "string", minLength: 1, maxLength: 100 },
        event: { type: "string", minLength: 1, maxLength: 128 },
        hook: { type: "string", minLength: 1, maxLength: 128, description: "this hook ran in the chain" },
        session: { type: "string", pattern: SESSION_ID },
        subject: { type: "string", minLength: 1, maxLength: 200, description: "case-insensitive substring of subject.summary" },
        limit: { type: "integer", minimum: 1, maximum: MAX_DECISION_LIMIT, default: DEFAULT_DECISION_LIMIT },
        cursor: { type: "string", minLength: 1, maxLength: 64, description: "next_cursor of the previous page" },
      },
    },
    response: {
      200: object({ decisions: { type: "array", items: { $ref: "Decision#" } }, next_cursor: { ...nullableString, description: "pass as cursor for the next (older) page; null at the end" } }, { required: ["decisions", "next_cursor"] }),
      ...errors(...AUTH, 400, 404),
    },
  },
  auditHead: {
    tags: ["audit"],
    summary: "The audit log's head (seq and hash) for anchoring",
    security: security("operator"),
    response: { 200: object({ seq: { type: "integer" }, hash: { type: "string" } }, { required: ["seq", "hash"] }), ...errors(...AUTH, 404) },
  },
} as const);
