package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/sft"
)

// writeCardBody writes the card's text: what the records are, said so
// that every sentence is true of them (offline placeholders and answers
// no judge model scored are named as such, first), then provenance,
// counts, languages, what was left out, the license and how to load it.
func writeCardBody(b *bytes.Buffer, opt Options, st Stats) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	pv := st.Provenance
	p("# %s\n\n", opt.Name)
	if pv.OfflineDialogues > 0 {
		p("> **Not training data: %d of %d records (%d of %d assistant turns) hold %s.** dialogfarm ran them without a model\n",
			pv.OfflineDialogues, st.Records, pv.OfflineTurns, pv.Turns, dialog.OfflineAnswers)
		p("> service and they were exported with `--allow-offline`, to try the pipeline; every such answer starts with\n")
		p("> `[offline placeholder]`, and its metadata says `\"offline\": true`.\n\n")
	}
	p("Supervised fine-tuning data for an IDE code assistant, recorded by dialogfarm: each record is one\n")
	p("dialogue a simulated developer had with the assistant in a real editor, with every user message exactly\n")
	p("as the plugin sent it and every assistant message the answer the plugin was shown.\n")
	writeJudged(b, st)
	if len(st.Warnings) > 0 {
		p("\n## Warnings\n\n")
		for _, w := range st.Warnings {
			p("- %s\n", w)
		}
	}
	writeProvenance(b, st)
	p("\n## Counts\n\n| | records |\n|---|---:|\n")
	p("| dialogues read | %d |\n| records selected | %d |\n| records kept | %d |\n", st.Dialogues, st.Selected, st.Records)
	p("| train | %d |\n| validation | %d |\n| assistant turns | %d |\n", st.Splits[SplitTrain], st.Splits[SplitValidation], st.Turns)
	p("\nKeep rate (score at least %g, before the quality gates): %s.\n", st.MinScore, st.Keep)
	if st.Records > 0 {
		p("Tokens per record: mean %.1f, p50 %d, p95 %d, max %d.\n", st.Tokens.Mean, st.Tokens.P50, st.Tokens.P95, st.Tokens.Max)
	}
	p("Splits: by a hash of each dialogue's id seeded with %d, %g of dialogues to train: a dialogue keeps its split\n", st.Seed, st.Split)
	p("whatever else an export keeps or a run adds.\n")
	p("\n## Languages\n\nNatural languages in the records' user and assistant messages (detected in their text; records): %s.\n",
		dialog.Counts(st.Locales))
	p("Programming languages (records): %s.\n", dialog.Counts(st.Languages))
	p("\n## Left out\n\n| reason | count |\n|---|---:|\n")
	for _, r := range slices.Sorted(maps.Keys(st.Skipped)) {
		p("| skipped: %s | %d |\n", r, st.Skipped[r])
	}
	for _, r := range DropReasons {
		p("| dropped: %s | %d |\n", r, st.Dropped[r])
	}
	writeLicense(b, st.License)
	if st.Records == 0 {
		p("\n## No records\n\nThis folder holds no record: nothing passed the selection and the gates (see Left out).\n")
		p("It was written with `--allow-empty`; there is nothing to load.\n")
		return
	}
	p("\n## Load it\n\n```python\nfrom datasets import load_dataset\n")
	p("ds = load_dataset(\"path/to/this/folder\")  # the splits listed in the front-matter\n```\n\n")
	if st.Format == sft.FormatOpenAI {
		p("Records hold `messages` (`role`, `content`), the shape TRL's `SFTTrainer` and OpenAI fine-tuning read.\n")
	} else {
		p("Records hold `conversations` (`from`: system, human, gpt; `value`), the ShareGPT shape.\n")
	}
	p("LLaMA-Factory: point `dataset_dir` at this folder and use %s from `dataset_info.json`.\n", factoryNames(opt.Name, st))
}

// writeJudged says how the kept answers were scored: "scored at least 5
// by the judge" only when a judge model scored every one of them.
func writeJudged(b *bytes.Buffer, st Stats) {
	pv := st.Provenance
	models := strings.Join(slices.Sorted(maps.Keys(pv.JudgeModels)), ", ")
	if pv.Turns == 0 {
		return
	}
	if pv.LLMJudged() {
		fmt.Fprintf(b, "Every assistant message is an answer a judge model (%s) scored at least %g.\n", models, st.MinScore)
		return
	}
	fmt.Fprintf(b, "\nNot every assistant message was scored by a judge model. Of the %d assistant turns, kept at a final score of at least %g:\n\n", pv.Turns, st.MinScore)
	for _, m := range []struct{ mode, text string }{
		{dialog.JudgeLLM, "scored by a judge model (" + models + ")"},
		{dialog.JudgeRulesOnly, "scored by the judge's rules alone, no judge model configured: 5 minus rule deductions, not a judgement of the answer"},
		{dialog.JudgeError, "scored by the rules alone because the judge model failed"},
		{dialog.JudgeNone, "not judged at all (kept because the minimum score is 0)"},
	} {
		if n := pv.JudgeModes[m.mode]; n > 0 {
			fmt.Fprintf(b, "- %d %s\n", n, m.text)
		}
	}
}

// writeProvenance is the table of where the records came from.
func writeProvenance(b *bytes.Buffer, st Stats) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	pv, run := st.Provenance, st.Run
	or := func(s, none string) string {
		if s == "" {
			return none
		}
		return s
	}
	p("\n## Provenance\n\n| | |\n|---|---|\n")
	p("| dialogfarm version | %s |\n", or(run.Version, "unknown"))
	profile := or(run.Profile, "unknown")
	if run.ProfileHash != "" {
		profile = fmt.Sprintf("`%s` (%s)", run.Profile, run.ProfileHash)
	}
	p("| behaviour profile | %s |\n", profile)
	p("| judge rubric version | %s |\n", or(run.RubricVersion, "unknown"))
	p("| offline placeholders | %d of %d records, %d of %d assistant turns |\n", pv.OfflineDialogues, st.Records, pv.OfflineTurns, pv.Turns)
	p("| answers by model (turns) | %s |\n", dialog.Counts(pv.AnswerModels))
	p("| pool models that proposed candidates (turns) | %s |\n", dialog.Counts(pv.PoolModels))
	p("| judge models (turns scored) | %s |\n", dialog.Counts(pv.JudgeModels))
	p("| judge mode (turns) | %s |\n", dialog.Counts(pv.JudgeModes))
	p("| first query written by (records) | %s |\n", dialog.Counts(pv.QuerySources))
	red := "none recorded"
	if len(run.Redactions) > 0 {
		data, _ := json.Marshal(run.Redactions)
		red = "`" + string(data) + "`"
	}
	p("| secrets redacted in the run | %s |\n", red)
	p("| format; metadata; tokens | `%s`; `%s`; `%s` |\n", st.Format, st.Meta, st.Tokenizer)
}

// writeLicense says what the license field means.
func writeLicense(b *bytes.Buffer, l License) {
	fmt.Fprintf(b, "\n## License\n\n")
	switch l.ID {
	case LicenseUnknown:
		fmt.Fprintf(b, "Not set (`license: unknown`). The records hold code from the repositories the run drove and answers\n")
		fmt.Fprintf(b, "of the models above: their licenses and terms apply. Set one with `--dataset-license`.\n")
	case LicenseOther:
		fmt.Fprintf(b, "%s: %s\n", l.Name, l.Link)
	default:
		fmt.Fprintf(b, "`%s`.\n", l.ID)
	}
}

// factoryNames are the LLaMA-Factory dataset names of the splits written.
func factoryNames(name string, st Stats) string {
	var out []string
	for _, split := range splitFiles(st) {
		out = append(out, "`"+name+"_"+split+"`")
	}
	return strings.Join(out, " and ")
}
