import semver from "semver";

/**
 * Semantic-version precedence (semver.org §11) for the downgrade check of `bundles.install`, through
 * the `semver` library: negative when `a` < `b`, 0 when equal in precedence (build metadata is
 * ignored), positive when `a` > `b`.
 *
 * @example
 * ```ts
 * compareVersions("1.2.0", "1.10.0") < 0; // true
 * compareVersions("1.0.0-rc.1", "1.0.0") < 0; // true
 * ```
 */
export function compareVersions(a: string, b: string): number {
  return semver.compare(a, b);
}
