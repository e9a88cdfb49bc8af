/**
 * `vcp-hooks hooks list --format repo-yaml (--bundle … | --server URL)` (PROFILES §3.6): the registration
 * JSON `{ event_type: [{ id, handler }] }` that the repo-local YAML template's registration script
 * emits, for the repo-yaml hooks vcp-hooks would run. The order is the plan's (`runtime.profiles.plan`,
 * `GET /v1/hooks?profile=repo-yaml&event=…`): the order the hooks run in, not a re-sorting of files.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ProfilePlanEntry, VcpArtifact } from "../index.js";
import { buildBundle, REPO_YAML_EVENTS_LIST } from "../tooling.js";
import { CheckFailed, EXIT_OK, parseCommand, printJson, progress, stringOption, UsageError, type Command, type Io } from "./common.js";
import { loadLocalBundle, startLocalRuntime } from "./local.js";
import { CONNECTION_OPTIONS, request, targetOf } from "./remote.js";
import { readRepoYamlDir, repoYamlSource } from "./repo-yaml-dir.js";

const USAGE = `usage: vcp-hooks hooks list --format repo-yaml --bundle <file.vcpb|dir>… [--json]
       vcp-hooks hooks list --format repo-yaml --server URL [--token T] [--json]

Prints the registration JSON of the repository-local YAML hook template, { "<event_type>": [{ "id",
"handler" }] }, for the repo-yaml hooks that would run, per event in run order; disabled hooks are left
out. With --bundle (repeatable) the bundles are installed in a local runtime (nothing is written): a
.vcpb file, a policy directory (policy.yaml), or a .system/hooks/ directory (built as by 'vcp-hooks
build --from repo-yaml'); a hook built from a .system/hooks/ file shows its handler as the file wrote it
({ kind: action, module, export }), another as { kind: action, bundle, export }. With --server the
running deployment's plans are read (GET /v1/hooks?profile=repo-yaml&event=…, a client or operator
token from --token or VCP_OPERATOR_TOKEN); the server does not return a hook's module, so its handler
is { kind: action, bundle }.`;

type Registration = Record<string, Array<{ id: string; handler: Record<string, unknown> }>>;

export const hooksCommand: Command = {
  name: "hooks",
  summary: "hooks list --format repo-yaml: the registration JSON of the repo-yaml hooks",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand(
      "hooks",
      args,
      { ...CONNECTION_OPTIONS, format: { type: "string" }, bundle: { type: "string", multiple: true } },
      { min: 1, max: 1, names: "a subcommand (list)" },
    );
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    if (positionals[0] !== "list") throw new UsageError(`hooks: unknown subcommand '${positionals[0]}' (only: list)`);
    const format = stringOption("hooks", values, "format");
    if (format !== "repo-yaml") throw new UsageError(`hooks list: --format ${format ?? "(missing)"}: the only format is repo-yaml`);
    const bundles = (values["bundle"] as string[] | undefined) ?? [];
    const serverGiven = typeof values["server"] === "string";
    if (serverGiven === (bundles.length > 0)) throw new UsageError("hooks list: give --bundle <file|dir>… (local) or --server URL (a running server), one of the two");
    const registration = serverGiven ? await fromServer(values) : await fromBundles(bundles, io);
    // The registration JSON is the output with or without --json.
    printJson(io, registration);
    return EXIT_OK;
  },
};

async function fromServer(values: Record<string, unknown>): Promise<Registration> {
  const target = targetOf("hooks list", values);
  const out: Registration = {};
  for (const event of REPO_YAML_EVENTS_LIST) {
    const { hooks } = (await request(target, "GET", `/v1/hooks?profile=repo-yaml&event=${encodeURIComponent(event)}`)) as { hooks: ProfilePlanEntry[] };
    const listed = hooks.filter((h) => h.enabled).map((h) => ({ id: h.name, handler: { kind: "action", bundle: h.bundle } }));
    if (listed.length > 0) out[event] = listed;
  }
  return out;
}

async function fromBundles(paths: readonly string[], io: Io): Promise<Registration> {
  const artifacts: VcpArtifact[] = [];
  const seen = new Map<string, string>();
  for (const path of paths) {
    const artifact = await loadArtifact(path, io);
    // A second bundle of the same name would replace the first on install (a hot swap): say so, never list half.
    const earlier = seen.get(artifact.manifest.bundle);
    if (earlier !== undefined) throw new CheckFailed(`hooks list: ${path} and ${earlier} are both bundle '${artifact.manifest.bundle}' (one would replace the other); build one with another name (build --from repo-yaml --name …)`);
    seen.set(artifact.manifest.bundle, path);
    artifacts.push(artifact);
  }
  for (const a of artifacts) {
    const profile = a.manifest.profile ?? "vcp@1";
    if (profile !== "repo-yaml" && !profile.startsWith("repo-yaml@")) io.err(`note: ${a.manifest.bundle}: profile ${profile}, not repo-yaml: none of its hooks is listed`);
  }
  // The plan decides the order (priority, deployment before session, registration): the same as a server's.
  const runtime = await startLocalRuntime(io, () => undefined);
  try {
    for (const a of artifacts) await runtime.bundles.install(a);
    const hooksOf = new Map(artifacts.flatMap((a) => a.manifest.hooks.map((h) => [`${a.manifest.bundle}\0${h.name}`, h] as const)));
    const out: Registration = {};
    for (const event of REPO_YAML_EVENTS_LIST) {
      const listed = runtime.profiles
        .plan("repo-yaml", event)
        .filter((h) => h.enabled)
        .map((h) => {
          const def = hooksOf.get(`${h.bundle}\0${h.name}`);
          const fromYaml = (def?.metadata?.["repo_yaml"] as { handler?: { module?: unknown; export?: unknown } } | undefined)?.handler;
          // Keys in the template's order (the artifact stores metadata canonically, keys sorted).
          const handler = fromYaml !== undefined ? { kind: "action", module: fromYaml.module, export: fromYaml.export } : { kind: "action", bundle: h.bundle, export: def?.action ?? null };
          return { id: h.name, handler };
        });
      if (listed.length > 0) out[event] = listed;
    }
    return out;
  } finally {
    await runtime.close();
  }
}

/** A .vcpb, a policy directory, or a .system/hooks/ directory (no policy.yaml: built as `build --from repo-yaml`). */
async function loadArtifact(path: string, io: Io): Promise<VcpArtifact> {
  const isDir = existsSync(path) && statSync(path).isDirectory();
  if (!isDir || existsSync(join(path, "policy.yaml"))) return (await loadLocalBundle(path, io)).artifact;
  progress(io, `building ${path} (from repo-yaml)`);
  const { origins: _origins, ...generated } = await repoYamlSource(path, await readRepoYamlDir(path), { bundle: "repo-yaml-hooks", version: "1.0.0", trust: "deployment" });
  return (await buildBundle(path, { generated })).artifact;
}
