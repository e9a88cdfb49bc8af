/**
 * The server process's `.cpuprofile` (bench/load.ts with VCP_LOAD_NODE_ARGS="--cpu-prof …") split by
 * what an HTTP chain request does, per request: each sample goes to the first category (in the order
 * below) that any frame of its stack matches.
 *
 *   node dist/bench/lib/cpu-profile-categories.js <file.cpuprofile> <requests the server answered>
 *
 * Sampled time is wall time while the thread was on a JS or native frame: on a loaded machine a
 * thread preempted right after a syscall that woke another (a pipe or socket write, a libuv job)
 * charges the wait to that syscall, so the "syscall" rows are inflated; the JS rows are close to CPU.
 * Quote CPU time (bench/load.ts) for how much, this for where.
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const RULES: ReadonlyArray<readonly [string, RegExp]> = [
  ["startup (module load, schema compile)", /(compileSchemasForSerialization|ValidatorCompiler|wrapSafe|compileSourceTextModule|moduleLoad|require@|instantiate|onRoute|createServer@)/],
  ["idle", /^\(idle\)/],
  ["gc", /^\(garbage collector\)/],
  ["write syscalls: IPC to the sandbox host, HTTP responses", /^writeUtf8String@/],
  ["audit: seal (hash text, sha256, line)", /^(sealRecord|sealPrepared|admit)@/],
  ["audit: normalize, redact, cap, prepare text", /^(prepare|normalizeInput)@.*audit/],
  ["audit: write + fdatasync submission (flushLoop)", /^flushLoop@/],
  ["runtime metrics (prom-client labels)", /(prom-client|observe\/metrics)/],
  ["audit: build records (audit-trail recordChain)", /^recordChain@.*audit-trail/],
  ["audit input hash (hashInput)", /^(inputHash|hashInput)@/],
  ["input bounds walks (json-bounds)", /json-bounds/],
  ["IPC send: supervisor dispatch, message JSON", /^(dispatch|pump)@.*supervisor/],
  ["IPC receive: channel parse, onChainReply", /(onChainReply@|parseChannelMessages)/],
  ["fastify: response serialize", /(preSerializationHook|serialize@|fast-json-stringify|onSendEnd|onSendHook)/],
  ["fastify: body parse, validation, handler, runtime fire", /(content-type-parser|secure-json-parse|rawBody)/],
  ["server: onRequest (auth, limits)", /(authenticate@|onRequest|requireRole)/],
  ["server: onResponse (HTTP metrics)", /onResponse/],
  ["HTTP parse, routing", /(parserOnHeadersComplete|parserOnIncoming|find-my-way|routeHandler|_http_server|HTTPParser)/],
  ["microtasks, timers", /(runMicrotasks|processTicksAndRejections|processTimers|processImmediate)/],
];

const [file, requestsArg] = process.argv.slice(2);
if (file === undefined || requestsArg === undefined) {
  process.stderr.write("usage: cpu-profile-categories <file.cpuprofile> <requests>\n");
  process.exit(2);
}
const requests = Number(requestsArg);
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0));
const label = (id: number): string => {
  const f = byId.get(id)!.callFrame;
  return `${f.functionName}@${f.url.replace(/.*\/(node_modules|dist)\//, "$1/")}`;
};
const totals = new Map<string, number>();
for (const [id, us] of self) {
  const stack: string[] = [];
  for (let c: number | undefined = id; c !== undefined; c = parent.get(c)) stack.push(label(c));
  const category = RULES.find(([, re]) => stack.some((frame) => re.test(frame)))?.[0] ?? "other";
  totals.set(category, (totals.get(category) ?? 0) + us);
}
const busy = [...totals].filter(([k]) => k !== "idle" && !k.startsWith("startup")).reduce((a, [, v]) => a + v, 0);
process.stdout.write(`${requests} requests; sampled busy time (no idle, no startup) ${(busy / requests).toFixed(1)} µs per request\n`);
for (const [category, us] of [...totals].sort((a, b) => b[1] - a[1])) {
  if (category === "idle" || category.startsWith("startup")) continue;
  process.stdout.write(`${(us / requests).toFixed(1).padStart(8)} µs  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${category}\n`);
}
