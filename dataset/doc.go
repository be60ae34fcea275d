// Package dataset turns recorded dialogues into a dataset folder that the
// usual consumers load unchanged: Hugging Face datasets (and TRL, which
// reads through it), LLaMA-Factory and the OpenAI fine-tuning API.
//
// # What the folder holds
//
//	train.jsonl, validation.jsonl   the records, split by dialogue
//	train.meta.jsonl, ...           per-record metadata with --meta sidecar
//	README.md                       dataset card (YAML front-matter the Hub reads)
//	dataset_info.json               LLaMA-Factory entries for both splits
//	stats.json                      counts, drops by reason, token statistics
//
// The records are what package sft selects (the same turns, the same
// bytes, the same skip reasons); this package adds quality gates, the
// split and the files around the records.
//
// # One schema per file
//
// Every line of a file has the same keys with the same JSON types, because
// the Hugging Face JSON loader infers an Arrow schema from its first block
// of lines and casts every later block to it: a key missing on some line,
// or a null (or an empty list) where later lines hold a string (or a list
// of objects), fails the load once the file outgrows one block
// (huggingface/datasets issues #7169 and #7222). So no key is omitted, no
// value is null, empty strings stand for "unknown", scores are always
// written as floats ("5.0", never "5"), and the judge's deductions, a list
// that is empty for most kept turns, are written as JSON text in a string.
//
// # Quality gates
//
// In this order, each drop counted by reason in stats.json and the card:
// the conversation's shape (only system, user and assistant roles; at most
// one system message, first; then user and assistant alternating, user
// first, assistant last; no empty or blank content), the token limit
// (Options.MaxTokens, counted with an offline tiktoken encoding the way
// OpenAI's cookbook counts chat examples), exact duplicates and near
// duplicates (MinHash signatures over character 5-grams of the user and
// assistant text, candidate pairs from LSH banding, kept when the
// estimated Jaccard similarity is below Options.Dedup.Near). Of a group of
// duplicates the record with the smallest id is kept.
//
// # Split
//
// Records are split by dialogue (a record is one dialogue, so a dialogue is
// never in both files), each by a hash of the seed and its id alone
// (splitOf): train when the hash, as a number in [0, 1), is below
// Options.Split. So a dialogue keeps its split whatever the minimum score,
// the gates, a re-export or dialogues added to the run later; the share in
// train is Options.Split on average, and a small folder may have an empty
// validation split (a warning says so).
//
// # What the card says
//
// Each sentence of the card is true of the records it describes: a banner
// first when any holds the offline stand-in's placeholders; "scored at
// least N by a judge model" only when a judge model scored every kept
// turn, else how many the rules alone scored; the provenance (dialogfarm's
// version, profile, rubric, models of answers, pool and judge, judge
// modes, query sources, redaction totals); the keep rate as dialog.KeepRate
// defines it for every report; the natural languages detected in the
// records' text (not the locales their configs asked for); the warnings a
// consumer must know (a split under a consumer's minimum); the license in
// the Hub's terms. A folder with no record is ErrEmpty unless AllowEmpty,
// and then its card lists no data files and offers nothing to load.
package dataset
