/**
 * `vcp-hooks`: the command-line front end (DESIGN §6.1). A thin adapter over src/index.ts: parse,
 * call the library, print. Run from a checkout with `bin/vcp-hooks …` or `npm run vcp-hooks -- …`
 * (both use the pinned Node 24 and --no-node-snapshot).
 *
 * Exit codes: 0 ok, 1 failed check, 2 usage error, 141 the reader closed stdout (as SIGPIPE would). `--json` anywhere ⇒ machine output on stdout
 * (errors too, as { "error": { code, message, details } }); progress and notes go to stderr.
 */
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import type { Command, Io } from "./common.js";

// Everything else loads on demand: `vcp-hooks hook` (the agent adapter, run once per agent event) must
// start without src/index.ts, zod, pino or isolated-vm, so this file imports no module of ours eagerly.
const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
/** 128 + SIGPIPE (13): what a shell reports for a process killed by SIGPIPE, as `yes | head -1` is. */
const EXIT_PIPE_CLOSED = 141;
type Common = typeof import("./common.js");
let common: Common | undefined;

/** Commands in help order; each module is loaded only when its command runs. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  init: { summary: "scaffold a policy directory (policy.yaml, src/index.ts, tests/, tsconfig.json)", load: async () => (await import("./init.js")).initCommand },
  build: { summary: "build a policy directory into a .vcpb artifact", load: async () => (await import("./build.js")).buildCommand },
  keygen: { summary: "generate an Ed25519 signing key pair", load: async () => (await import("./keygen.js")).keygenCommand },
  sign: { summary: "sign a .vcpb with an Ed25519 key", load: async () => (await import("./sign.js")).signCommand },
  verify: { summary: "verify a .vcpb's digest, signatures and trust against a keyring", load: async () => (await import("./verify.js")).verifyCommand },
  test: { summary: "run policies' tests/*.yaml cases through the real sandbox", load: async () => (await import("./test.js")).testCommand },
  fire: { summary: "run one chain locally over bundles or policy dirs and print the trace", load: async () => (await import("./fire.js")).fireCommand },
  serve: { summary: "run the HTTP server (vcp.yaml, or the embedded default)", load: async () => serveCommand },
  audit: { summary: "audit verify|tail|export <file>: check the hash chain, read or export the decision log", load: async () => (await import("./audit.js")).auditCommand },
  bench: { summary: "bench perf|sandbox: run a bench", load: async () => (await import("./bench.js")).benchCommand },
  push: { summary: "upload a .vcpb to a running server (PUT /v1/bundles/<name>)", load: async () => (await import("./remote.js")).pushCommand },
  status: { summary: "a running server's bundles, sandbox and audit state (GET /v1/status)", load: async () => (await import("./remote.js")).statusCommand },
  hooks: { summary: "hooks list --format repo-yaml: the registration JSON of the repo-yaml hooks (local bundles or --server)", load: async () => (await import("./hooks.js")).hooksCommand },
  doctor: { summary: "report deployment problems: required events without hooks, profiles without bundles, bundles of disabled profiles", load: async () => (await import("./doctor.js")).doctorCommand },
  config: { summary: "config check [--config vcp.yaml]: validate a deployment config without starting", load: async () => (await import("./config.js")).configCommand },
  token: { summary: "create a bearer token and print its vcp.yaml auth entry (token_sha256)", load: async () => (await import("./token.js")).tokenCommand },
  completion: { summary: "print a bash or zsh completion script", load: async () => (await import("./completion.js")).completionCommand(Object.keys(COMMANDS)) },
  version: { summary: "print the package, commit, Node, V8 and isolated-vm versions (--json)", load: async () => (await import("./version.js")).versionCommand },
  import: { summary: "import claude|gemini|llxprt|ai-memory|repo-yaml <config> -o <out>: agent hooks → pinned exec bundle, stubs, report", load: async () => (await import("./import.js")).importCommand },
  hook: { summary: "hook <Event> --dialect gemini|llxprt|claude|codex|vscode|cursor|openhands|goose|copilot|ai-memory|repo-yaml: the agent adapter (stdin → server → native answer)", load: async () => hookCommand },
};

const hookCommand: Command = {
  name: "hook",
  summary: "the agent adapter",
  usage: "",
  async run(args) {
    // Loads only node builtins; prints its own usage and renders its own errors (--on-error).
    const { runHook } = await import("./hook.js");
    return runHook(args.filter((a) => a !== "--json"));
  },
};

const serveCommand: Command = {
  name: "serve",
  summary: "run the HTTP server",
  usage: "",
  async run(args) {
    // The server module (fastify, pino) loads only for `serve`; it prints its own usage and errors.
    const { runServe } = await import("./serve.js");
    return runServe(args);
  },
};

async function version(): Promise<string> {
  return (await import("./version.js")).versionInfo().version;
}

function overallHelp(version: string): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return `vcp-hooks ${version}: sandboxed policy runtime for the VCP Hook System 1.0.0

usage: vcp-hooks <command> [options]      (from a checkout: bin/vcp-hooks … or npm run vcp-hooks -- …)

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  .join("\n")}

Global options:
  --json        machine-readable output on stdout (errors as {"error":{code,message,details}})
  -h, --help    help; 'vcp-hooks <command> --help' for a command
  --version     print the version
Exit codes: 0 ok, 1 failed check, 2 usage error, 141 output closed by its reader.

A typical flow:
  vcp-hooks init policies/my-policy && vcp-hooks test policies/my-policy
  vcp-hooks keygen --out keys/ops-2026
  vcp-hooks build policies/my-policy -o my-policy.vcpb
  vcp-hooks sign my-policy.vcpb --key keys/ops-2026.pem --key-id ops-2026
  vcp-hooks verify my-policy.vcpb --keyring keyring.yaml`;
}

/** Run the CLI with `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[], givenIo?: Io): Promise<number> {
  // The adapter first, before anything heavy is loaded (the Node check too: it lives in src/index.ts).
  if (argv[0] === "hook") return hookCommand.run(argv.slice(1), givenIo as Io);
  common ??= await import("./common.js");
  const { describeError, errorJson, printJson, processIo, UsageError } = common;
  const io = givenIo ?? processIo(argv.includes("--json"));
  try {
    const { assertNodeVersion } = await import("../index.js");
    assertNodeVersion();
  } catch (err) {
    // --json promises errors as JSON on stdout: a script checking the code sees UNSUPPORTED_NODE too.
    if (io.json) printJson(io, errorJson(err));
    io.err(`vcp-hooks: ${describeError(err)}`);
    return EXIT_FAILED;
  }
  const commandAt = argv.findIndex((a) => !a.startsWith("-"));
  const leading = commandAt === -1 ? argv : argv.slice(0, commandAt);
  for (const flag of leading) {
    if (flag !== "--json" && flag !== "--help" && flag !== "-h" && flag !== "--version") return usage(io, new UsageError(`unknown option '${flag}'`));
  }
  if (leading.includes("--version")) {
    io.out(await version());
    return EXIT_OK;
  }
  if (commandAt === -1) {
    io.out(overallHelp(await version()));
    return leading.includes("--help") || leading.includes("-h") ? EXIT_OK : EXIT_USAGE;
  }
  const name = argv[commandAt]!;
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (name === "help") {
    const topic = argv[commandAt + 1];
    if (topic !== undefined && Object.hasOwn(COMMANDS, topic)) return main([topic, "--help"], io);
    io.out(overallHelp(await version()));
    return EXIT_OK;
  }
  if (entry === undefined) return usage(io, new UsageError(`unknown command '${name}' (commands: ${Object.keys(COMMANDS).join(", ")})`));
  const command = await entry.load();
  // --json before the command applies to it too; serve parses its own arguments.
  const rest = [...(leading.includes("--json") && name !== "serve" ? ["--json"] : []), ...argv.slice(commandAt + 1)];
  if (leading.includes("--help") || leading.includes("-h")) rest.push("--help");
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err, name);
    if (io.json) printJson(io, errorJson(err));
    io.err(`vcp-hooks ${name}: ${describeError(err)}`);
    if (process.env["VCP_DEBUG"] && err instanceof Error && err.stack) io.err(err.stack);
    return EXIT_FAILED;
  }
}

function usage(io: Io, err: Error, command?: string): number {
  const { errorJson, printJson } = common!;
  if (io.json) printJson(io, errorJson(err));
  io.err(`vcp-hooks: ${err.message}\nRun 'vcp-hooks ${command !== undefined ? `${command} ` : ""}--help' for usage.`);
  return EXIT_USAGE;
}

/**
 * A reader that stopped reading (`vcp-hooks status | head -1`) closed our stdout (or stderr): stop
 * quietly, as a process killed by SIGPIPE does — Node ignores the signal and would crash on the
 * unhandled EPIPE with a stack trace instead. Any other stream error stays an error.
 */
function exitOnClosedPipe(err: NodeJS.ErrnoException): void {
  if (err.code === "EPIPE") process.exit(EXIT_PIPE_CLOSED);
  throw err;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  // One handler for every command (the agent adapter's `hook` included).
  process.stdout.on("error", exitOnClosedPipe);
  process.stderr.on("error", exitOnClosedPipe);
  process.exitCode = await main(process.argv.slice(2));
}
