/**
 * Summarize V8 `.cpuprofile` files (from `--cpu-prof`): per file, self time by function and by
 * source file, top entries. `node dist/bench/lib/cpu-profile-top.js <dir> [top]`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const dir = process.argv[2] ?? ".";
const top = Number(process.argv[3] ?? 25);
for (const name of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).sort()) {
  const profile = JSON.parse(readFileSync(join(dir, name), "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    total += us;
    if (frame.functionName === "(idle)") {
      idle += us;
      continue;
    }
    const file = frame.url.replace(/^file:\/\//, "").replace(/.*\/(node_modules|dist)\//, "$1/") || "(native)";
    const fn = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    byFile.set(file, (byFile.get(file) ?? 0) + us);
  }
  const busy = total - idle;
  process.stdout.write(`\n== ${name}: busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms\n`);
  const show = (map: Map<string, number>, n: number): void => {
    for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      process.stdout.write(`  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}\n`);
    }
  };
  process.stdout.write(" by file:\n");
  show(byFile, 12);
  process.stdout.write(" by function:\n");
  show(byFn, top);
}
