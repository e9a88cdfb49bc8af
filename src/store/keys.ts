/*
 * Every Redis key and channel vcp-hooks uses, built in one place from the deployment's `store.prefix`.
 *
 *   <prefix>:meta                      hash   store layout version
 *   <prefix>:epoch                     string random id written at the first start (heartbeat, when absent):
 *                                            its disappearance tells the replicas Redis lost its data
 *   <prefix>:periodic:due              zset   session key → when its next periodic tick is due (Redis TIME, ms)
 *   <prefix>:replicas                  hash   replica id → its heartbeat record (JSON, Redis TIME)
 *   <prefix>:bundle:artifact:<digest>  string a verified .vcpb (JSON), by content digest
 *   <prefix>:bundle:active             hash   bundle name → its desired revision (JSON: digest, seq, …)
 *   <prefix>:bundle:seq                string the revision counter: one INCR per bundle change
 *   <prefix>:bundle:generation         string random id made with the first change: a Redis that lost its
 *                                            data starts a new one, so reused seq numbers are not mistaken
 *                                            for revisions a replica already has
 *   <prefix>:bundle:changed            channel a new revision was written (message: its seq)
 *   <prefix>:bundle:floor              string JSON: the last time a replica raised the counter back after Redis
 *                                            lost data (data-loss.ts): the others learn of a rewind they did not see
 *   <prefix>:rate:<scope>:<key>        string GCRA theoretical arrival time of one rate-limited key
 *   <prefix>:switches                  hash   hook name → "1"/"0": deployment-wide hook switches (switches.ts)
 *   <prefix>:chan:switches             channel a deployment-wide hook switch was recorded (message: the hook)
 *   <prefix>:s:{<session key>}:<part>  any    one session's state (redis-sessions); the hash tag keeps a
 *                                            session's keys in one slot for Redis Cluster
 *   vcp-hooks:prefixes                 zset   every prefix with live replicas (score: Redis TIME, ms) —
 *                                            the one key outside the prefix, so a replica started with a
 *                                            prefix its peers do not use can say so
 *
 * A variable part (ids chosen by clients, principal ids, bundle names) is escaped with `keyPart`, so
 * no id can forge another key's name or break out of a hash tag.
 */

/** Bump when the layout above changes incompatibly: a replica seeing another layout says so at start. */
export const STORE_LAYOUT_VERSION = 1;

/** The global index of prefixes (outside every prefix on purpose, see above). */
export const PREFIX_INDEX_KEY = "vcp-hooks:prefixes";

/** Escape a variable key part: `%`, `:`, `{`, `}` and whitespace/control characters become `%XX`. */
export function keyPart(value: string): string {
  return value.replace(/[%:{}\s\x00-\x1f\x7f]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`);
}

export interface StoreKeys {
  readonly prefix: string;
  readonly meta: string;
  readonly epoch: string;
  readonly replicas: string;
  bundleArtifact(digest: string): string;
  readonly bundleActive: string;
  readonly bundleSeq: string;
  readonly bundleGeneration: string;
  readonly bundleChannel: string;
  readonly bundleFloor: string;
  /** One rate-limited key of a limiter `scope` (e.g. `registry`). */
  rate(scope: string, key: string): string;
  /** One part (`state`, `lock`, …) of one session, by its runtime session key (ids are per owner). */
  session(sessionKey: string, part: string): string;
  /** A pub/sub channel of this deployment. */
  channel(name: string): string;
  /** Any other key of this deployment: `<prefix>:<part>:<part>…`, each part escaped. */
  custom(...parts: string[]): string;
}

/**
 * @example
 * ```ts
 * const keys = storeKeys("vcp");
 * keys.bundleArtifact("sha256:ab…"); // "vcp:bundle:artifact:sha256%3Aab…"
 * keys.session("dev-client/s1", "state"); // "vcp:s:{dev-client/s1}:state"
 * ```
 */
export function storeKeys(prefix: string): StoreKeys {
  const k = (...parts: string[]): string => [prefix, ...parts].join(":");
  return Object.freeze({
    prefix,
    meta: k("meta"),
    epoch: k("epoch"),
    replicas: k("replicas"),
    bundleArtifact: (digest: string) => k("bundle", "artifact", keyPart(digest)),
    bundleActive: k("bundle", "active"),
    bundleSeq: k("bundle", "seq"),
    bundleGeneration: k("bundle", "generation"),
    bundleChannel: k("bundle", "changed"),
    bundleFloor: k("bundle", "floor"),
    rate: (scope: string, key: string) => k("rate", keyPart(scope), keyPart(key)),
    session: (sessionKey: string, part: string) => `${prefix}:s:{${keyPart(sessionKey)}}:${keyPart(part)}`,
    channel: (name: string) => k("chan", keyPart(name)),
    custom: (...parts: string[]) => k(...parts.map(keyPart)),
  });
}
