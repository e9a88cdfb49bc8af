/** `vcp-hooks build <dir> [-o file]`: a policy directory → an unsigned `.vcpb` (DESIGN §3.2). */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { buildBundle, serializeArtifact } from "../tooling.js";
import { EXIT_OK, parseCommand, printJson, progress, stringOption, type Command } from "./common.js";

const USAGE = `usage: vcp-hooks build <dir> [-o <file.vcpb>] [--json]

Bundle the policy in <dir> (policy.yaml + its entry, default src/index.ts) with esbuild into one
.vcpb artifact and print its digest. The build fails, writing nothing, on a manifest error (naming
file, path such as hooks[0].fail_closed, line and rule: the same validation install runs, so trust and
fail_closed, conditions and metadata are checked here), a Node built-in / LLM SDK / unresolvable import
(naming the file and import), or a hook whose action is not an exported function (checked in a real
isolate). The same sources give the same bytes. The artifact is unsigned: sign it with 'vcp-hooks sign'.

Options:
  -o, --out <file>  output file (default <dir>/dist/<bundle>-<version>.vcpb)
  --json            print { file, bundle, version, digest, hooks, bytes, warnings }
Exit: 0 built, 1 the build failed, 2 usage error.`;

export const buildCommand: Command = {
  name: "build",
  summary: "build a policy directory into a .vcpb artifact",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand("build", args, { out: { type: "string", short: "o" } }, { min: 1, max: 1, names: "<dir>" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const dir = positionals[0]!;
    progress(io, `building ${dir}`);
    const { artifact, warnings } = await buildBundle(dir);
    for (const w of warnings) io.err(`warning: ${w}`);
    const { manifest } = artifact;
    const file = stringOption("build", values, "out") ?? join(dir, "dist", `${manifest.bundle}-${manifest.version}.vcpb`);
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
