/**
 * The profile conformance case runner (PROFILES §4): every `test/profiles/<dir>/*.yaml` case runs
 * through the library (`runtime.fireProfile`) and through the HTTP route
 * (`POST /v1/profiles/{profile}/events/{event}` on a server on an ephemeral port), and both answers
 * are checked against the case's `expect`.
 *
 * Cost (one busy 2-core machine): one runtime (one sandbox host) and one server per (profile, strict,
 * settings) combination, created on first use; each case's hooks are built by the real build path (esbuild, manifest
 * validation) once per distinct hook set, installed under case-unique bundle names, and removed after
 * the case, so every case sees only its own hooks. The build's export check runs in node:vm here
 * (test-only: the sandbox checks the exports again at install, where it counts).
 *
 * Case file: one case, a YAML list of cases, or `{ cases: [...] }`. Fields (all of them supported):
 * name, upstream?, profile, event, strict?, settings?, pure?, hooks[{ name, bundle?, event?, matcher?,
 * match?, blocking?, sequential?, priority?, timeout_ms?, fail_closed?, trust?, condition?,
 * output | throws | action }], input, expect{ native?, native_subset?, exit_code?, ran?, outcomes?, stderr? }.
 * `pure: false` only tells the pure simulators (test/unit/profiles) to skip a case; this runner runs all.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import vm from "node:vm";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { buildBundle, type ExportProbe } from "../../src/bundle/build.js";
import type { VcpArtifact } from "../../src/bundle/artifact.js";
import { createRuntime, SKIPPED_OUTCOME_LIST, type ProfileFireResult, type Runtime } from "../../src/index.js";
import { getProfile } from "../../src/profile-kit.js";
import { createServer, type VcpServer } from "../../src/server/app.js";

const HookCaseSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9_-]{1,64}$/, "hook names match [a-z0-9_-]{1,64}"),
    bundle: z.string().regex(/^[a-z0-9_-]{1,40}$/).optional(),
    event: z.string().optional(),
    matcher: z.string().optional(),
    /** repo-yaml `match` filters (PROFILES §8.8), compiled by the profile's `compileFilter` at build. */
    match: z.unknown().optional(),
    /** repo-yaml: a `blocking` hook's `blocked_by_policy` (or failure) blocks PreAbilityCall. */
    blocking: z.boolean().optional(),
    sequential: z.boolean().optional(),
    priority: z.number().int().optional(),
    timeout_ms: z.number().int().optional(),
    fail_closed: z.boolean().optional(),
    trust: z.enum(["system", "deployment", "session"]).optional(),
    condition: z.unknown().optional(),
    output: z.unknown().optional(),
    throws: z.string().optional(),
    action: z.string().optional(),
  })
  .strict()
  .refine((h) => [h.output !== undefined, h.throws !== undefined, h.action !== undefined].filter(Boolean).length <= 1, { message: "give at most one of output, throws, action" });

export const ProfileCaseSchema = z
  .object({
    name: z.string().min(1),
    upstream: z.string().optional(),
    profile: z.string(),
    event: z.string(),
    strict: z.boolean().optional(),
    /** The deployment's settings for the profile (vcp.yaml `profiles.<name>`, besides `strict`). */
    settings: z.record(z.string(), z.unknown()).optional(),
    /** `false`: the case needs the real runtime (timeouts, deadlines); the pure simulators skip it. */
    pure: z.boolean().optional(),
    hooks: z.array(HookCaseSchema),
    input: z.unknown(),
    expect: z
      .object({
        native: z.unknown().optional(),
        /** The native answer contains these fields (objects: recursively; arrays: element by element, same length). */
        native_subset: z.unknown().optional(),
        exit_code: z.number().int().optional(),
        ran: z.array(z.string()).optional(),
        outcomes: z.record(z.string(), z.string()).optional(),
        stderr: z.string().optional(),
      })
      .strict(),
  })
  .strict();
export type ProfileCase = z.infer<typeof ProfileCaseSchema> & { file: string };

/** Every case under `root`/<dir>/*.yaml, files and cases in name order. */
export function loadProfileCases(root: string): ProfileCase[] {
  const cases: ProfileCase[] = [];
  for (const dir of readdirSync(root).sort()) {
    const path = join(root, dir);
    if (!statSync(path).isDirectory()) continue;
    for (const file of readdirSync(path).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml")).sort()) {
      const doc = parseYaml(readFileSync(join(path, file), "utf8")) as unknown;
      const list = Array.isArray(doc) ? doc : doc !== null && typeof doc === "object" && "cases" in doc ? (doc as { cases: unknown[] }).cases : [doc];
      list.forEach((raw, i) => {
        const parsed = ProfileCaseSchema.safeParse(raw);
        const where = `${dir}/${file}${list.length > 1 ? `[${i}]` : ""}`;
        if (!parsed.success) throw new Error(`${where}: ${parsed.error.issues.map((x) => `${x.path.join(".")}: ${x.message}`).join("; ")}`);
        cases.push({ ...parsed.data, file: where });
      });
    }
  }
  return cases;
}

/** Hooks whose action ran (not skipped or deduplicated), in plan order. */
export function ranHooks(result: ProfileFireResult["result"]): string[] {
  return result.hook_results.filter((h) => !SKIPPED_OUTCOME_LIST.includes(h.outcome)).map((h) => h.hook);
}

type HookCase = z.infer<typeof HookCaseSchema>;

/** Whether an `action` is one expression (`{ a: 1 }`, `input.x`) rather than a function body (`while (true) {}`, `return …`). Syntax only: nothing runs. */
function isExpression(source: string): boolean {
  try {
    new Function("input", `return (${source}\n);`);
    return true;
  } catch {
    return false;
  }
}

/** The guest source of one hook's action: a fixed output, a throw, or a function body of `(input)`. */
function actionSource(hook: HookCase): string {
  if (hook.throws !== undefined) return `function (input) { throw new Error(${JSON.stringify(hook.throws)}); }`;
  if (hook.action !== undefined) return isExpression(hook.action) ? `function (input) { return (${hook.action}\n); }` : `function (input) { ${hook.action}\n}`;
  return `function (input) { return ${JSON.stringify(hook.output ?? null)}; }`;
}

// The export check of the build, in node:vm (the real check is the sandbox's, at install).
const vmProbe: ExportProbe = async (bundle) => {
  const context = vm.createContext({});
  new vm.Script(bundle.code).runInContext(context, { timeout: 1000 });
  const exported = vm.runInContext("globalThis.__vcp_bundle", context) as Record<string, unknown>;
  return { exports: Object.keys(exported).filter((k) => typeof exported[k] === "function") };
};

interface Lane {
  runtime: Runtime;
  server: VcpServer;
  url: string;
}

export interface CaseRun {
  library: ProfileFireResult;
  http: { status: number; body: any; nativeBody: unknown; exitHeader: string | null };
}

/**
 * @example
 * ```ts
 * const runner = createCaseRunner({ profileModules: [url] });
 * const { library, http } = await runner.run(c);
 * await runner.close();
 * ```
 */
export function createCaseRunner(options: { profileModules?: string[] } = {}) {
  const lanes = new Map<string, Promise<Lane>>();
  const built = new Map<string, Promise<VcpArtifact>>();
  const workDir = mkdtempSync(join(tmpdir(), "vcp-profile-cases-"));
  const token = "profile-case-client-token-0123456789";
  let counter = 0;

  function lane(profile: string, strict: boolean, settings: Record<string, unknown>): Promise<Lane> {
    const key = `${profile}\u0000${strict}\u0000${JSON.stringify(settings)}`;
    let existing = lanes.get(key);
    if (existing === undefined) {
      existing = (async () => {
        const runtime = await createRuntime({
          requireSignatures: false,
          audit: false,
          sandbox: { threads: 1 },
          // Every case installs and removes its bundles: far more registry changes than spec §8.2.5's default 30/min.
          registrationsPerMinute: 1_000_000,
          profiles: { [profile]: { ...settings, strict } },
          ...(options.profileModules !== undefined ? { profileModules: options.profileModules } : {}),
        });
        const server = await createServer({
          runtime,
          settings: {
            auth: [{ id: "cases", role: "client", token_sha256: createHash("sha256").update(token).digest("hex") }],
            limits: { body_bytes: 1024 * 1024, bundle_bytes: 5 * 1024 * 1024 },
            sessionHookAllowlist: [],
          },
        });
        const url = await server.listen("127.0.0.1", 0);
        return { runtime, server, url };
      })();
      lanes.set(key, existing);
    }
    return existing;
  }

  /** Build (once per distinct hook set) the bundles of one case: hooks grouped by `bundle` and trust. */
  async function bundlesOf(c: ProfileCase): Promise<VcpArtifact[]> {
    const groups = new Map<string, HookCase[]>();
    for (const hook of c.hooks) {
      const key = `${hook.bundle ?? "main"}\u0000${hook.trust ?? "deployment"}`;
      groups.set(key, [...(groups.get(key) ?? []), hook]);
    }
    const artifacts: Promise<VcpArtifact>[] = [];
    for (const [key, hooks] of groups) {
      const trust = key.split("\u0000")[1]!;
      // Identical actions share one export, so identical definitions deduplicate as they would upstream.
      const exports = new Map<string, string>();
      const manifestHooks = hooks.map((hook) => {
        const source = actionSource(hook);
        let name = exports.get(source);
        if (name === undefined) exports.set(source, (name = `a${exports.size}`));
        return {
          name: hook.name,
          event: hook.event ?? c.event,
          action: name,
          // No priority: a profile manifest defaults it to 50 (PROFILES §8.5).
          ...(hook.priority !== undefined ? { priority: hook.priority } : {}),
          // No timeout_ms: the manifest gives the profile's default, capped at 30 000 ms.
          ...(hook.timeout_ms !== undefined ? { timeout_ms: hook.timeout_ms } : {}),
          ...(hook.matcher !== undefined ? { matcher: hook.matcher } : {}),
          ...(hook.match !== undefined ? { match: hook.match } : {}),
          ...(hook.blocking !== undefined ? { blocking: hook.blocking } : {}),
          ...(hook.sequential !== undefined ? { sequential: hook.sequential } : {}),
          ...(hook.fail_closed !== undefined ? { fail_closed: hook.fail_closed } : {}),
          ...(hook.condition !== undefined ? { condition: hook.condition } : {}),
        };
      });
      const code = [...exports].map(([source, name]) => `export const ${name} = ${source};`).join("\n");
      const manifest = { bundle: "case", version: "1.0.0", profile: c.profile, trust, hooks: manifestHooks };
      const cacheKey = JSON.stringify([manifest, code]);
      let artifact = built.get(cacheKey);
      if (artifact === undefined) {
        artifact = (async () => {
          const dir = join(workDir, `b${built.size}`);
          mkdirSync(join(dir, "src"), { recursive: true });
          writeFileSync(join(dir, "policy.yaml"), JSON.stringify(manifest));
          writeFileSync(join(dir, "src", "index.ts"), `${code}\n`);
          return (await buildBundle(dir, { probeExports: vmProbe })).artifact;
        })();
        built.set(cacheKey, artifact);
      }
      artifacts.push(artifact);
    }
    return Promise.all(artifacts);
  }

  async function run(c: ProfileCase): Promise<CaseRun> {
    const { runtime, url } = await lane(c.profile, c.strict === true, c.settings ?? {});
    const artifacts = await bundlesOf(c);
    const names: string[] = [];
    try {
      for (const artifact of artifacts) {
        // A case-unique name: the digest changes with the name, and no two cases share a bundle.
        const name = `case-${++counter}`;
        await runtime.bundles.install({ manifest: { ...artifact.manifest, bundle: name }, code: artifact.code });
        names.push(name);
      }
      const library = await runtime.fireProfile(c.profile, c.event, { input: c.input, principal: { id: "cases", role: "client" } });
      const path = `/v1/profiles/${encodeURIComponent(getProfile(c.profile).id)}/events/${encodeURIComponent(c.event)}`;
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      const res = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(c.input) });
      const body = (await res.json()) as unknown;
      const nativeRes = await fetch(`${url}${path}?answer=native`, { method: "POST", headers, body: JSON.stringify(c.input) });
      const nativeBody = (await nativeRes.json()) as unknown;
      return { library, http: { status: res.status, body, nativeBody, exitHeader: nativeRes.headers.get("x-vcp-exit-code") } };
    } finally {
      for (const name of names.reverse()) await runtime.bundles.remove(name);
    }
  }

  async function close(): Promise<void> {
    for (const pending of lanes.values()) {
      const { server, runtime } = await pending;
      await server.close();
      await runtime.close();
    }
    rmSync(workDir, { recursive: true, force: true });
  }

  return { run, close };
}
