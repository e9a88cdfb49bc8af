// What idle sessions cost Redis when a periodic hook is installed (issue 27): three real replicas on one
// real redis-server, one deployment-scope periodic hook every 60 s, then 200 idle sessions. Before,
// every replica claimed ticks by scanning every open session every 200 ms (one script per session
// per scan), so Redis's load grew with sessions × replicas (a 3-replica trial: 79 → 3,647 commands/s)
// although nothing was due. Now a replica asks Redis only for the sessions whose next tick is due (a
// sorted set by due time), so idle sessions cost nothing between their ticks.
//
// Redis's own count of the commands it ran (INFO stats total_commands_processed, commands run inside
// scripts included) is read over a window before and after the sessions open, and printed; the
// assertion is on the count, not on time: 200 idle sessions must add fewer than one command per
// session per second for the whole deployment (the scans added ~15 per session per second).
// `npm run build` first (the replicas run dist/).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReplicas, type ReplicaSet } from "../../support/replicas.js";
import { bundleCode } from "../../support/bundles.js";
import { constitution, installedDigest } from "./fixtures.js";
import { waitFor } from "../../support/replicas.js";

const SESSIONS = 200;
const WINDOW_MS = 5000;

const manifest = {
  bundle: "minutely",
  version: "1.0.0",
  trust: "deployment",
  hooks: [{ name: "every_minute", type: "periodic", action: "tick", priority: 50, timeout_ms: 2000, metadata: { interval_ms: 60_000 } }],
};
const code = bundleCode({ tick: `(input) => ({ status: "continue" })` });

let set: ReplicaSet;

beforeAll(async () => {
  set = await startReplicas({ count: 3, config: { limits: { sessions_per_client: SESSIONS + 10 } } });
  const artifact = set.sign(manifest, code);
  const res = await set.replicas[0]!.request("PUT", "/v1/bundles/minutely", { token: set.tokens.operator, body: artifact });
  expect(res.status, res.text).toBe(201);
  for (const r of set.replicas) await waitFor(`${r.name} to run minutely`, async () => (await installedDigest(set, r, "minutely")) === artifact.digest);
}, 300_000);
afterAll(async () => {
  await set?.close();
}, 120_000);

/** Redis's counters: every command it ran (scripts' own calls included) and the scripts called. */
async function counters(): Promise<{ total: number; scripts: number }> {
  const stats = await set.redis.command("INFO", "stats");
  const total = Number(/total_commands_processed:(\d+)/.exec(stats)?.[1]);
  const commandstats = await set.redis.command("INFO", "commandstats");
  let scripts = 0;
  for (const m of commandstats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) scripts += Number(m[1]);
  return { total, scripts };
}

/** Commands per second Redis ran over one window (the window's own INFO calls are 2 of them). */
async function rate(): Promise<{ total_per_s: number; scripts_per_s: number; commands: number }> {
  const before = await counters();
  const started = Date.now();
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  const after = await counters();
  const seconds = (Date.now() - started) / 1000;
  const commands = after.total - before.total;
  return { total_per_s: Math.round(commands / seconds), scripts_per_s: Math.round((after.scripts - before.scripts) / seconds), commands };
}

describe("periodic hooks: idle sessions cost Redis nothing between ticks", () => {
  test(`${SESSIONS} idle sessions with a 60 s periodic hook add less than one Redis command per session per second`, async () => {
    const idle = await rate();
    const [A, B, C] = set.replicas;
    for (let i = 0; i < SESSIONS; i++) {
      const r = [A, B, C][i % 3]!;
      const res = await r.request("POST", "/v1/sessions", { token: set.tokens.client, body: { session_id: `idle-${i}`, context: {}, constitution } });
      expect(res.status, res.text).toBe(201);
    }
    // Every session's schedule is set up (its first sighting), and its first tick is a minute away.
    await new Promise((r) => setTimeout(r, 2000));
    const withSessions = await rate();
    console.log(
      `periodic cost, 3 replicas, one 60 s periodic hook: Redis ran ${idle.total_per_s} commands/s (${idle.scripts_per_s} scripts/s) with no session, ` +
        `${withSessions.total_per_s} commands/s (${withSessions.scripts_per_s} scripts/s) with ${SESSIONS} idle sessions`,
    );
    const addedPerSecond = withSessions.total_per_s - idle.total_per_s;
    expect(addedPerSecond).toBeLessThan(SESSIONS);
  }, 300_000);
});
