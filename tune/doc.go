// Package tune closes the loop between what a profile asks for and what
// the judge keeps. A pilot (a few dialogues of the plan fitted to the
// repositories, through the same pipeline, editor, pool and judge as
// `run`) measures the keep rate, turns and cost of every dimension value;
// a re-plan then oversamples where the judge keeps less, so that the
// dialogues expected to be kept, not the ones produced, have the profile's
// shares (as fitted to the repositories).
//
// # The keep-rate model
//
// A dialogue is kept when at least one of its turns is (the export's
// rule, sft.KeptTurns). The probability is modelled per cell as
//
//	logit P(kept) = b + Σ_dim u[dim][value]
//
// with a normal prior N(0, σ_dim²) on the u of each dimension's values and
// N(0, 2²) on b, fitted by maximum a posteriori (FitModel). σ_dim is
// estimated from the pilot (empirical Bayes: the scale that makes the
// dimension's kept-of-driven counts most likely under a binomial
// logit-normal model, integrated by quadrature), unless --sigma fixes it;
// a dimension whose values do not differ beyond chance gets σ near 0 and
// its values stay at the pooled keep rate. This is a hierarchical
// model by dimension marginals: with few pilot dialogues a value's effect
// stays near 0, i.e. its keep rate near the pooled one (like a Beta prior
// shrinking a raw rate), and it takes its own rate as dialogues
// accumulate; fitting every dimension at once keeps a value from being
// blamed for a bad value of another dimension that the pilot happened to
// pair it with.
//
// # The re-plan
//
// Reweight rakes the planning weights: it plans 2,000 dialogues on the
// current weights (stratified, as MakePlan does), computes each
// dimension's expected kept shares under the model, and multiplies each
// value's weight by its fitted share over its expected kept share, until
// the expected kept shares stop moving (1e-4 bits) or 25 rounds. A
// value's planned share is capped at MaxFactor (default 4) times its
// fitted share: a value the judge rarely keeps would otherwise take the
// whole budget. A value whose keep rate is below MinKeep (default 0.1) is
// not oversampled at all. Both are reported (LowKeep) with the judge
// rules that deducted most from their turns, for someone to fix
// the prompts, the pool or the rubric instead.
//
// # Budget and rounds
//
// --max-dialogues and --budget-usd bound everything together: the pilot,
// each later round's tranche and the tuned plan. The tuned plan gets what
// is left, its cost estimated as the pilot's cost per turn times each
// cell's planned turns. With more than one round, each further round
// drives a pilot-sized tranche of the current tuned plan into
// OUT/round-K and re-estimates from all dialogues so far.
//
// # Resuming
//
// Every round is a run folder that resumes as `run` does; a round's plan,
// once written, is reused; tune.json refuses other arguments. Killed and
// started again, tune continues without driving a dialogue twice.
package tune
