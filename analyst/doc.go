// Package analyst turns interaction logs into a behaviour profile, a
// profile into a production plan, and a finished run into a fidelity
// report.
//
//   - Analyze reads JSONL interaction logs (one object per query with at
//     least session_id, turn and query; file or language, selection,
//     cursor, trigger and command when logged; a Mapping renames fields for
//     other log formats). Observable dimensions are derived by rules
//     (Observe); intent and difficulty by an OpenAI-compatible model in
//     batches with a cache (LLMClassifier) or, when no model is configured,
//     by KeywordClassifier, a keyword fallback whose labels and fitted
//     profile say so. Unusable lines are counted with their line numbers.
//   - MakePlan allocates N dialogues over a profile's cells, deterministic
//     for a seed, with largest-remainder quotas and the constraints kept.
//   - PlanForRepos first fits the profile to what the repositories can
//     realise (FitToRepos, on configgen.IndexRepos): the mass of a value
//     they cannot realise is re-normalised over the dimension's realisable
//     values, every other dimension's shares kept; a language whose files
//     take only some cursor behaviours becomes a constraint; N is capped
//     at the distinct targets they hold. The moves are recorded with
//     their reasons (WriteMoves prints them).
//   - BuildReport compares target, produced and kept distributions per
//     dimension with the Jensen–Shannon divergence (JSD, in bits).
//
// Each dimension is counted once per logged session, on its first query:
// a chat config describes how a dialogue starts, and follow-ups are
// written at run time, so counting every query would over-weight long
// sessions.
package analyst
