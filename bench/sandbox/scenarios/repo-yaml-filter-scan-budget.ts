/**
 * An untrusted repository's repo-yaml bundle of many hooks, each within the per-hook matcher cost but
 * together scanning far more than one bundle's per-chain budget: one `only_if_changed_paths` glob per
 * hook, none matching, against the largest `changed_files` an agent may send (64 paths × 1,024
 * characters). Before the budget every hook's filter scanned every path on the host (≈ 400 ms for the
 * profile review's bench filter). Contained: the filters that fit the bundle's `maxMatcherCost` budget
 * say `skipped_matcher`, every later filtering hook of the bundle is not run and is `error` naming the
 * limit, a hook with no filter still runs; a `changed_files` over the input bounds is refused 400
 * before any glob runs; the server then answers a small event normally.
 */
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_TOKENS, send, startTenantServer } from "../http-tenants.js";
import type { BundleSource } from "../../../src/index.js";

/** Hooks with a filter: enough that their scans overrun one bundle's per-chain budget several times. */
const FILTERED = 40;
const BUNDLE = "scan-heavy";

const BUNDLES: BundleSource[] = [
  {
    manifest: {
      bundle: BUNDLE,
      version: "1.0.0",
      trust: "deployment",
      profile: "repo-yaml",
      hooks: [
        ...Array.from({ length: FILTERED }, (_, i) => ({ name: `f${i}`, event: "SessionStop", action: "act", timeout_ms: 2000, match: { only_if_changed_paths: [`**/*.md${i}`] } })),
        { name: "free", event: "SessionStop", action: "act", timeout_ms: 2000 },
      ],
    } as unknown as BundleSource["manifest"],
    code: "var __vcp_bundle = { act: function () { return {}; } };",
  },
];

interface HookRow { hook: string; outcome: string; error?: string }

export const scenario: Scenario = {
  id: "repo-yaml-filter-scan-budget",
  category: "profile-boundary",
  title: "40 repo-yaml hooks of one bundle, one non-matching glob each, against the largest changed_files: their filters together overrun the bundle's per-chain scan budget",
  expected: "filters within the budget skip, later filtering hooks are error naming maxMatcherCost and never run, an unfiltered hook runs; oversized changed_files is refused 400; a small event is answered afterwards",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ bundles: BUNDLES, bodyBytes: 256 * 1024 });
    let servedAfter = false;
    const observed: string[] = [];
    try {
      const changed = Array.from({ length: 64 }, (_, i) => `${"a".repeat(1020)}${String(i).padStart(4, "0")}`);
      const res = await send(t.url, "POST", "/v1/profiles/repo-yaml/events/SessionStop", TENANT_TOKENS.a, { session_id: "scan-1", changed_files: changed });
      const rows = ((res.body as { result?: { hook_results?: HookRow[] } } | undefined)?.result?.hook_results ?? []).filter((r) => r.hook.startsWith("f") || r.hook === "free");
      const skipped = rows.filter((r) => r.outcome === "skipped_matcher").length;
      const refused = rows.filter((r) => r.outcome === "error" && /used up their scan budget of \d+ units for this chain \(limit maxMatcherCost\)/.test(r.error ?? "")).length;
      const free = rows.find((r) => r.hook === "free")?.outcome;
      observed.push(`status ${res.status}: ${skipped} skipped_matcher, ${refused} over budget, free ${free}`);
      checks.check(res.status === 200, `the event answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
      checks.check(skipped > 0 && refused > 0 && skipped + refused === FILTERED, `expected every filtering hook to skip or be refused by the budget; got ${skipped} skipped, ${refused} refused of ${FILTERED}`);
      // Plan order: every refusal comes after the last filter that ran.
      const lastSkip = rows.map((r) => r.outcome).lastIndexOf("skipped_matcher");
      const firstRefusal = rows.findIndex((r) => r.outcome === "error");
      checks.check(firstRefusal === -1 || lastSkip < firstRefusal, "a filtering hook ran after the bundle's budget was spent");
      checks.check(free === "ok", `the hook without a filter did not run (${free})`);

      const over = await send(t.url, "POST", "/v1/profiles/repo-yaml/events/SessionStop", TENANT_TOKENS.a, { session_id: "scan-2", changed_files: [...changed, "b".repeat(2000)] });
      observed.push(`oversized changed_files ${over.status}`);
      checks.check(over.status === 400 && /changed_files: at most 65536 characters/.test(JSON.stringify(over.body)), `oversized changed_files answered ${over.status}: ${JSON.stringify(over.body).slice(0, 200)}`);

      const small = await send(t.url, "POST", "/v1/profiles/repo-yaml/events/SessionStop", TENANT_TOKENS.a, { session_id: "scan-3", changed_files: ["README.md0"] });
      const smallRows = (small.body as { result?: { hook_results?: HookRow[] } } | undefined)?.result?.hook_results ?? [];
      servedAfter = small.status === 200 && smallRows.find((r) => r.hook === "f0")?.outcome === "ok";
    } finally {
      await t.close();
    }
    return checks.outcome(observed.join(", "), servedAfter);
  },
};
