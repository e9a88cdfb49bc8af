/**
 * `vcp-hooks build <dir> [-o file]`: a policy directory → an unsigned `.vcpb` (DESIGN §3.2).
 * `vcp-hooks build --from repo-yaml <.system/hooks> [-o file]`: the same from a directory of one YAML
 * file per hook (PROFILES §3.6, §8.8).
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { buildBundle, serializeArtifact, type BuildResult } from "../tooling.js";
import { EXIT_OK, parseCommand, printJson, progress, stringOption, UsageError, type Command } from "./common.js";
import { readRepoYamlDir, repoYamlExportError, repoYamlSource } from "./repo-yaml-dir.js";

const USAGE = `usage: vcp-hooks build <dir> [-o <file.vcpb>] [--json]
       vcp-hooks build --from repo-yaml <.system/hooks dir> [--name <bundle>] [--bundle-version <semver>]
                       [--trust session|deployment] [-o <file.vcpb>] [--json]

Bundle the policy in <dir> (policy.yaml + its entry, default src/index.ts) with esbuild into one
.vcpb artifact and print its digest. The build fails, writing nothing, on a manifest error (naming
file, path such as hooks[0].fail_closed, line and rule: the same validation install runs, so trust and
fail_closed, conditions and metadata are checked here), a Node built-in / LLM SDK / unresolvable import
(naming the file and import), or a hook whose action is not an exported function (checked in a real
isolate). The same sources give the same bytes. The artifact is unsigned: sign it with 'vcp-hooks sign'.

With --from repo-yaml, <dir> holds one YAML file per hook (id, event_type, enabled, summary, match,
handler: { kind: action, module: <file under dir>, export: <function> }, blocking); the hooks register
in file-name order in a repo-yaml@1 bundle, built and checked like any other. A file that is not
valid YAML, misses id or event_type, names a module outside <dir>, or has a 'kind: script' handler
(a command: it needs the command lane, see 'vcp-hooks import repo-yaml') fails the build naming the
file and the field. Disabled hooks are left out.

Options:
  -o, --out <file>  output file (default <dir>/dist/<bundle>-<version>.vcpb; with --from repo-yaml
                    ./<bundle>-<version>.vcpb)
  --from repo-yaml  build from a .system/hooks/ directory instead of policy.yaml
  --name <bundle>   with --from: the bundle name (default repo-yaml-hooks)
  --bundle-version <v>  with --from: the bundle version (default 1.0.0)
  --trust <level>   with --from: the trust requested (default deployment: blocking hooks need it)
  --json            print { file, bundle, version, digest, hooks, bytes, warnings }
Exit: 0 built, 1 the build failed, 2 usage error.`;

export const buildCommand: Command = {
  name: "build",
  summary: "build a policy directory into a .vcpb artifact",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand(
      "build",
      args,
      {
        out: { type: "string", short: "o" },
        from: { type: "string" },
        name: { type: "string" },
        "bundle-version": { type: "string" },
        trust: { type: "string" },
      },
      { min: 1, max: 1, names: "<dir>" },
    );
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const dir = positionals[0]!;
    const from = stringOption("build", values, "from");
    if (from !== undefined && from !== "repo-yaml") throw new UsageError(`build: --from ${from}: the only source format is repo-yaml`);
    if (from === undefined) {
      for (const o of ["name", "bundle-version", "trust"]) if (values[o] !== undefined) throw new UsageError(`build: --${o} goes with --from repo-yaml (a policy directory names it in policy.yaml)`);
    }
    progress(io, `building ${dir}${from !== undefined ? ` (from ${from})` : ""}`);
    let built: BuildResult;
    if (from === "repo-yaml") {
      const hooks = await readRepoYamlDir(dir);
      for (const d of hooks.disabled) io.err(`note: ${d.file}: hook '${d.name}' is disabled (enabled: false), left out`);
      const generated = await repoYamlSource(dir, hooks, {
        bundle: stringOption("build", values, "name") ?? "repo-yaml-hooks",
        version: stringOption("build", values, "bundle-version") ?? "1.0.0",
        trust: stringOption("build", values, "trust") ?? "deployment",
      });
      const { origins, ...source } = generated;
      built = await buildBundle(dir, { generated: source }).catch((err: unknown) => {
        throw repoYamlExportError(err, origins);
      });
    } else {
      built = await buildBundle(dir);
    }
    const { artifact, warnings } = built;
    for (const w of warnings) io.err(`warning: ${w}`);
    const { manifest } = artifact;
    const defaultDir = from === undefined ? join(dir, "dist") : ".";
    const file = stringOption("build", values, "out") ?? join(defaultDir, `${manifest.bundle}-${manifest.version}.vcpb`);
    const text = serializeArtifact(artifact);
    await writeAtomic(file, text);
    const bytes = Buffer.byteLength(text, "utf8");
    if (io.json) {
      printJson(io, { file, bundle: manifest.bundle, version: manifest.version, digest: artifact.digest, hooks: manifest.hooks.map((h) => h.name), bytes, warnings });
    } else {
      io.out(`built ${file}`);
      io.out(`  bundle   ${manifest.bundle} ${manifest.version} (trust requested: ${manifest.trust})`);
      io.out(`  hooks    ${manifest.hooks.map((h) => `${h.name} [${h.type ?? h.event}]`).join(", ")}`);
      io.out(`  digest   ${artifact.digest}`);
      io.out(`  size     ${bytes} bytes (unsigned; sign with: vcp-hooks sign ${file} --key <pem> --key-id <id>)`);
    }
    return EXIT_OK;
  },
};

/** Write via a temporary file and rename, so a failed write never leaves half an artifact. */
export async function writeAtomic(file: string, text: string, mode?: number): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text, mode === undefined ? {} : { mode });
  await rename(tmp, file);
}
