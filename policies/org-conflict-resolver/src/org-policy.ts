/**
 * The organization's conflict policy, shipped inside the bundle (the sandbox cannot load it from
 * anywhere else): a new table is a new bundle version, signed and audited like code.
 */
export const ORG_POLICY = {
  /** A safety-critical rule always beats one that is not. Two safety-critical rules: escalate. */
  safetyCriticalWins: true,
  /** Rule-id prefixes, strongest first: a rule whose id starts with an earlier prefix wins. */
  precedence: ["legal-", "safety-", "privacy-", "org-", "team-"] as const,
} as const;
