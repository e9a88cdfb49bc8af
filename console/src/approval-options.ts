/** The approval dialog's rules (pure: unit-tested): which option grants, which carries the default, the countdown. */
const GRANTING = new Set(["allow", "allow once", "allow always", "yes", "approve"]);

/** "4:59", "0:07": whole seconds left until `expiresAt`, never negative. */
export function countdown(expiresAt: string, now: number): string {
  const left = Math.max(0, Math.ceil((Date.parse(expiresAt) - now) / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
}

/** Whether an option grants (allow) or refuses (deny). */
export function grants(option: string): boolean {
  return GRANTING.has(option.trim().toLowerCase());
}

/** The option that carries the hook's default: the first granting one for `allow`, the first refusing one for `deny`. */
export function defaultOption(options: readonly string[], dflt: "allow" | "deny"): number {
  const i = options.findIndex((o) => grants(o) === (dflt === "allow"));
  return i >= 0 ? i : 0;
}
