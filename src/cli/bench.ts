/**
 * `vcp-hooks bench perf|sandbox [--out dir]`: run the bench scripts (dist/bench/*.js) as child
 * processes on this same Node with --no-node-snapshot (isolated-vm needs it), streaming their output.
 * The benches are built in a clone of the repository and are not in the npm package (they would
 * only weigh on every install): from an installed package the command says where to run them.
 */
// A bench is its own program, not the sandbox: starting it here does not bypass src/pool's supervisor.
// eslint-disable-next-line no-restricted-imports
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CheckFailed, EXIT_OK, parseCommand, stringOption, UsageError, type Command } from "./common.js";

const BENCHES = { perf: "perf.js", sandbox: "sandbox.js" } as const;

const USAGE = `usage: vcp-hooks bench perf|sandbox [--out <dir>] [--quick] [-- <bench options>]

Run a bench from this build (dist/bench/<name>.js) in a child process with the same Node and
--no-node-snapshot. Reports (a table on stdout, JSON in the output directory) come from the bench.
The benches ship with the source, not the npm package: run this in a clone after 'npm run build'.
  perf     chain latency and throughput (default reports: bench/reports/perf)
  sandbox  the sandbox bench for security reviewers (default reports: bench/reports/sandbox)

Options:
  --out <dir>   report directory, passed to the bench as --out
  --quick       a short run (passed through)
  -- …          anything after -- goes to the bench unchanged (e.g. -- --filter escape)
Exit: the bench's exit code; 2 usage error.`;

export const benchCommand: Command = {
  name: "bench",
  summary: "bench perf|sandbox [--out dir]: run a bench in a child process",
  usage: USAGE,
  async run(args, io) {
    const dashdash = args.indexOf("--");
    const own = dashdash === -1 ? args : args.slice(0, dashdash);
    const passthrough = dashdash === -1 ? [] : args.slice(dashdash + 1);
    const { values, positionals, help } = parseCommand("bench", own, { out: { type: "string", short: "o" }, quick: { type: "boolean" } }, { min: 1, max: 1, names: "perf|sandbox" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const name = positionals[0]!;
    if (!Object.hasOwn(BENCHES, name)) throw new UsageError(`bench: unknown bench '${name}' (expected perf or sandbox)`);
    // dist/src/cli/bench.js → dist/bench/<name>.js
    const script = fileURLToPath(new URL(`../../bench/${BENCHES[name as keyof typeof BENCHES]}`, import.meta.url));
    if (!existsSync(script)) {
      // An installed package has dist/src but no dist/bench (package.json "files"); a clone has both once built.
      const clone = existsSync(fileURLToPath(new URL("../../../bench", import.meta.url)));
      throw new CheckFailed(
        clone
          ? `${script} is missing; run 'npm run build' first`
          : `the benches are not in the npm package: run them from a clone of the vcp-hooks repository ('npm ci && npm run build', then 'vcp-hooks bench ${name}' or 'npm run bench${name === "perf" ? "" : `:${name}`}')`,
        "NOT_FOUND",
      );
    }
    const out = stringOption("bench", values, "out");
    const benchArgs = [...(out !== undefined ? ["--out", out] : []), ...(values["quick"] === true ? ["--quick"] : []), ...passthrough];
    io.err(`… running ${name} bench: ${script} ${benchArgs.join(" ")}`);
    const child = spawn(process.execPath, ["--no-node-snapshot", script, ...benchArgs], { stdio: "inherit" });
    return await new Promise<number>((resolveExit, reject) => {
      child.on("error", reject);
      child.on("exit", (code, signal) => resolveExit(code ?? (signal ? 1 : 0)));
    });
  },
};
