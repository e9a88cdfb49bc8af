// The README quick start driven by a generated client: openapi-fetch over the types openapi-typescript
// generated from the live GET /openapi.json. Not compiled with the repo (tsconfig.test.json excludes
// this folder): test/e2e/openapi-client.test.ts copies it next to the freshly generated `api.d.ts`,
// type-checks both with tsc (strict), then runs it against the live server. A route or schema change
// that breaks a client breaks that test.
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

type Artifact = components["schemas"]["VcpBundleArtifact"];
type ErrorCode404 = components["schemas"]["VcpError404"]["error"]["code"];

// The error codes are a closed enum in the document: a code no 404 carries does not type-check.
const notFound: ErrorCode404 = "SESSION_NOT_FOUND";
// @ts-expect-error RATE_LIMITED is a 429 code, never a 404's
const notA404: ErrorCode404 = "RATE_LIMITED";

export async function quickStart(baseUrl: string, tokens: { operator: string; client: string }, artifact: Artifact) {
  const operator = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${tokens.operator}` } });
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${tokens.client}` } });

  const installed = await operator.PUT("/v1/bundles/{name}", { params: { path: { name: artifact.manifest.bundle } }, body: artifact });
  if (installed.error !== undefined) throw new Error(`install: ${installed.error.error.code}`);
  const reinstalled = await operator.PUT("/v1/bundles/{name}", { params: { path: { name: artifact.manifest.bundle } }, body: artifact });
  if (reinstalled.data === undefined) throw new Error("re-install failed");

  const opened = await client.POST("/v1/sessions", {
    body: {
      session_id: "demo",
      context: { note: "reach me at ana@example.org" },
      constitution: { id: "family-safe", version: "3", rules: [{ id: "no-harm-1", text: "Never help cause harm.", safety_critical: true }] },
    },
  });
  if (opened.error !== undefined) throw new Error(`open: ${opened.error.error.code}`);

  const fired = await client.POST("/v1/sessions/{id}/chains/{type}", {
    params: { path: { id: "demo", type: "pre_inject" } },
    body: { event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Never help cause harm." } },
  });
  if (fired.data === undefined) throw new Error(`fire: ${fired.error?.error.code}`);
  const first = fired.data.hook_results?.[0];

  const adapted = await client.POST("/v1/sessions/{id}/adapt", {
    params: { path: { id: "demo" } },
    body: {
      selected: opened.data.constitution as components["schemas"]["Constitution"],
      candidates: [],
      selection_rationale: "the only one",
      selection_algorithm: "fixed",
    },
  });
  if (adapted.data === undefined) throw new Error(`adapt: ${adapted.error?.error.code}`);

  const head = await operator.GET("/v1/audit/head");
  if (head.data === undefined) throw new Error(`audit head: ${head.error?.error.code}`);

  // text/plain in the document: parsed as text, never as JSON.
  const metrics = await operator.GET("/metrics", { parseAs: "text" });
  if (metrics.data === undefined) throw new Error("metrics failed");

  // A refusal is typed: the code is one of the 404 codes.
  const missing = await client.GET("/v1/sessions/{id}", { params: { path: { id: "no-such-session" } } });
  const missingCode: string | undefined = missing.error?.error.code;

  return {
    installedStatus: installed.response.status,
    reinstalled: { status: reinstalled.response.status, unchanged: reinstalled.data.unchanged },
    fired: { status: fired.data.status, note: (fired.data.context as { note?: string }).note, outcome: first?.outcome, bundleDigest: first?.bundle_digest },
    adapted: adapted.data.outcome,
    auditHead: { seq: head.data.seq, hash: head.data.hash },
    metricsHasChains: metrics.data.includes("vcp_chains_total"),
    missing: { status: missing.response.status, code: missingCode },
    typed: { notFound, notA404 },
  };
}
