/*
 * The sandbox's gauges the metrics read on each scrape: the backend's counters and its host process.
 */
import type { ChainBackend } from "../pool/backend.js";
import type { MetricsSnapshot } from "./metrics.js";
import { readProcessUsage } from "./proc-usage.js";

/** The sandbox's gauges of a metrics scrape; the host's usage from /proc (Linux) while it runs. */
export function sandboxGauges(stats: ReturnType<ChainBackend["stats"]>): Pick<MetricsSnapshot, "restarts" | "queued" | "inFlight" | "host" | "quarantined" | "slowBundles" | "demotedBundles" | "watchdogKills"> {
  const usage = readProcessUsage(stats.hostPid);
  return {
    restarts: stats.restarts,
    queued: stats.queued,
    inFlight: stats.inFlight,
    host: usage === undefined || stats.hostPid === undefined ? undefined : { pid: stats.hostPid, usage },
    quarantined: stats.quarantined.length,
    slowBundles: stats.slowBundles.length,
    demotedBundles: stats.demotedBundles?.length ?? 0,
    watchdogKills: stats.watchdogKills ?? 0,
  };
}
