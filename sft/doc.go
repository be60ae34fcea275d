// Package sft turns recorded dialogues into supervised fine-tuning records
// (JSONL), keeping only turns whose chosen answer scored at least the
// minimum.
//
// # Which turns
//
// Only dialogues the driver completed (status "ok") are read. In each,
// turns are kept from the first up to, not including, the first turn that
// fails: an exchange error, or a score below Options.MinScore (5 by
// default; a shown answer with no verdict scores 0). A turn's score is the
// final score of the verdict on the candidate the plugin was actually
// shown (the candidate whose text is the exchange's answer), not of
// whatever ranks first after a re-judge: the next turn's history holds the
// shown answer, so that is the one the record must train on. Dialogues
// with no kept turn write nothing.
//
// # Which history
//
// A record's messages are the captured request of the last kept turn,
// exactly as the plugin sent it (its system prompt, the earlier user and
// assistant messages as the plugin replayed them, the last user message),
// followed by the answer it was shown. That is faithful by construction:
// it is precisely what the model saw at that turn, including how the
// plugin renders history, which a reconstruction from the turns' queries
// and answers could get wrong. It is checked, though: the request's
// history must be the earlier kept turns' user messages and answers, in
// order. Otherwise (the plugin trimmed or rewrote history, or carried
// messages from another conversation) the record would train on messages
// that were never judged, so the dialogue is cut to the turns before the
// first inconsistent one, and the cut is counted in the Summary.
//
// # Formats and metadata
//
// FormatOpenAI writes {"messages":[{"role","content"},...]}, loadable by
// OpenAI fine-tuning unchanged when metadata is not inline. FormatShareGPT
// writes {"conversations":[{"from":"system"|"human"|"gpt","value"},...]}
// (a leading "system" entry, as LLaMA-Factory and Axolotl read it).
// Metadata (id, config id, intent, language, locale, difficulty, who
// wrote the first query, whether the offline stand-in answered, per-turn
// scores, deductions, models of the chosen answers and how the judge
// scored them) goes inline under
// "metadata", into a sidecar JSONL file with one line per record (its
// "line" number and "id"), or nowhere.
//
// # Safety net
//
// Secrets are redacted before the editor opens a file (package redact), so
// the captured requests hold placeholders, not secrets. As a last check,
// every sample's messages are scanned again with redact's detector (or
// Options.Secrets) and a sample in which anything is found is dropped,
// counted under Summary.Skipped["secret"] and, per rule, SecretRules.
//
// Records of the offline stand-in responder are refused (counted, not
// written) unless Options.AllowOffline; the Summary's Provenance counts
// those written, and its Keep is the keep rate (dialog.KeepRate). An
// export that writes no record fails with ErrEmpty unless
// Options.AllowEmpty. Output is deterministic — records
// sorted by id, each id at most once (a later line of the input
// supersedes an earlier one with the same config id) — so exporting twice
// gives byte-identical files; ExportFiles writes through a temporary file
// renamed into place.
package sft
