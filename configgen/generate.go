package configgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"dialogfarm/configgen/coherence"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/runfiles"
	"dialogfarm/profiles"
	"dialogfarm/redact"
)

// Config configures Generate.
type Config struct {
	// Repos are local repository directories to pick files from.
	Repos []string
	// Seed drives every choice; the CLI defaults it to the plan's seed.
	Seed int64
	// MaxFileBytes skips larger files; MaxFiles bounds how many are indexed
	// (0: no bound).
	MaxFileBytes int64
	MaxFiles     int
	// ContextLines is how many lines around the cursor the plugin sends
	// (askplugin.contextLines); a cursor is only placed where those lines
	// hold no secret.
	ContextLines int
	// Model writes first queries; without one, templates do (and the
	// configs say so in query_source).
	Model Model
	// Concurrency bounds model requests in flight.
	Concurrency int
	// CachePath, when set, caches model-written queries across runs
	// (JSONL, appended as answers arrive).
	CachePath string
	// Secrets finds the secrets kept out of every region; nil builds
	// redact's default detector.
	Secrets *redact.Detector
	// Exemplars are real queries (from interaction logs) the query
	// model's prompt imitates: a few of the config's cell (intent, locale,
	// query style; coarser cells when it has none), redacted.
	Exemplars []Exemplar
	// TypoRate is the share of template queries in a Latin or Cyrillic
	// locale that get one typo (DefaultTypoRate).
	TypoRate float64
	// Progress, when set, is called as files are parsed (step "index")
	// and as the model writes queries (step "queries").
	Progress func(step string, done, total int)
}

// report calls cfg.Progress if it is set.
func (cfg Config) report(step string, done, total int) {
	if cfg.Progress != nil {
		cfg.Progress(step, done, total)
	}
}

// DefaultConfig: 256 KiB files, 20,000 files, 15 context lines, no model,
// 4 concurrent requests, DefaultTypoRate.
func DefaultConfig() Config {
	return Config{MaxFileBytes: 256 << 10, MaxFiles: 20000, ContextLines: 15, Concurrency: 4, TypoRate: DefaultTypoRate}
}

// Stats says what Generate looked at, skipped and produced.
type Stats struct {
	// Candidates counts source files of a supported language found.
	Candidates int `json:"candidates"`
	// Indexed counts files parsed and used, by language.
	Indexed map[string]int `json:"indexed"`
	// SkippedFiles and SkippedDirs count what was skipped, by reason
	// (Skip* constants).
	SkippedFiles map[string]int `json:"skipped_files"`
	SkippedDirs  map[string]int `json:"skipped_dirs"`
	// FilesWithSecrets counts indexed files where the detector fired;
	// SecretRegions the cursor/selection candidates left out for it.
	FilesWithSecrets int `json:"files_with_secrets"`
	SecretRegions    int `json:"secret_regions"`
	// Unfulfilled counts planned configs no file could realise, by
	// "language/cursor".
	Unfulfilled map[string]int `json:"unfulfilled"`
	// QuerySources counts first queries by who wrote them; ModelFallbacks
	// counts model failures that fell back to a template.
	QuerySources   map[string]int `json:"query_sources"`
	ModelFallbacks int            `json:"model_fallbacks"`
	Configs        int            `json:"configs"`
	// Incoherent counts first queries the coherence checker found
	// something in, by rule; Regenerated the template queries written
	// again with other wording, IncoherentDropped the configs dropped
	// when no wording was coherent, ModelIncoherent the model-written
	// queries replaced by a template for it.
	Incoherent        map[string]int `json:"incoherent"`
	Regenerated       int            `json:"regenerated"`
	IncoherentDropped int            `json:"incoherent_dropped"`
	ModelIncoherent   int            `json:"model_incoherent"`
	// CodeUnpasted counts "_code" configs whose query pastes nothing: no
	// code outside the code in view qualified (pasting that again would
	// repeat what the plugin sends).
	CodeUnpasted int `json:"code_unpasted"`
}

func newStats() Stats {
	return Stats{Indexed: map[string]int{}, SkippedFiles: map[string]int{}, SkippedDirs: map[string]int{},
		Unfulfilled: map[string]int{}, QuerySources: map[string]int{}, Incoherent: map[string]int{}}
}

// Result is Generate's output.
type Result struct {
	Configs []dialog.ChatConfig
	Stats   Stats
}

// ErrNoConfigs is returned when no planned config could be realised.
var ErrNoConfigs = errors.New("configgen: no config could be generated")

// Generate turns every planned dialogue into a chat config on a real file
// of the repositories. Config i of the plan (cells in order) depends only
// on the seed, i and the repositories' content, so the output is the same
// for the same inputs, and a model's queries are cached by prompt.
func Generate(ctx context.Context, pl *profiles.Plan, cfg Config, log *zap.Logger) (*Result, error) {
	if log == nil {
		log = zap.NewNop()
	}
	stats := newStats()
	if cfg.Secrets == nil {
		d, err := redact.NewDetector()
		if err != nil {
			return nil, fmt.Errorf("configs for plan %s: %w", pl.ID, err)
		}
		cfg.Secrets = d
	}
	idx, err := buildIndex(ctx, cfg, &stats)
	if err != nil {
		return nil, fmt.Errorf("configs for plan %s: %w", pl.ID, err)
	}
	t := newTemplater()
	var out []dialog.ChatConfig
	var specs []querySpec
	for i, vals := range pl.Rows() {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("configs for plan %s: stopped after %d of %d: %w", pl.ID, i, pl.N, err)
		}
		c, spec, ok := makeConfig(idx, pl, cfg, i, vals)
		if !ok {
			stats.Unfulfilled[vals[vocab.DimLanguage]+"/"+vals[vocab.DimCursor]]++
			continue
		}
		if c.Instruction == dialog.InstructionCommand {
			c.Turns[0].Query, c.QuerySource = t.query(spec, nil), dialog.QuerySourceCommand
		} else {
			q, ok := t.coherentQuery(&spec, cfg.Seed, i, &stats)
			if !ok {
				stats.IncoherentDropped++
				continue
			}
			c.Turns[0].Query, c.QuerySource = q, dialog.QuerySourceTemplate
			if strings.HasSuffix(c.QueryStyle, "_code") && spec.Paste == nil {
				stats.CodeUnpasted++
			}
		}
		out = append(out, c)
		specs = append(specs, spec)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("configs for plan %s: %w (unfulfilled: %v)", pl.ID, ErrNoConfigs, stats.Unfulfilled)
	}
	if cfg.Model != nil && len(cfg.Exemplars) > 0 {
		bank := newExemplarBank(cfg.Exemplars, cfg.Secrets)
		for k := range specs {
			s := &specs[k]
			s.Exemplars = bank.pick(s.Intent, s.Locale, s.Style, cfg.Seed, k)
		}
	}
	if cfg.Model != nil {
		if err := writeQueries(ctx, cfg, out, specs, &stats, log); err != nil {
			return nil, fmt.Errorf("configs for plan %s: %w", pl.ID, err)
		}
	}
	for _, c := range out {
		stats.QuerySources[c.QuerySource]++
	}
	stats.Configs = len(out)
	for k, n := range stats.Unfulfilled {
		log.Warn("planned configs not realised: no usable file", zap.String("cell", k), zap.Int("configs", n))
	}
	return &Result{Configs: out, Stats: stats}, nil
}

func queryRNG(seed int64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^0x7175657279, uint64(i)))
}

// writeQueries replaces template queries by model-written ones, in
// parallel; a config whose request fails keeps its template (marked so).
// If every request fails, the endpoint is taken to be broken: error.
func writeQueries(ctx context.Context, cfg Config, out []dialog.ChatConfig, specs []querySpec, stats *Stats, log *zap.Logger) error {
	w, err := newQueryWriter(cfg.Model, cfg.CachePath)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(cfg.Concurrency, 1))
	var mu sync.Mutex
	var firstErr error
	asked, answered := 0, 0
	for i := range out {
		if out[i].Instruction != dialog.InstructionCommand {
			asked++
		}
	}
	for i := range out {
		if out[i].Instruction == dialog.InstructionCommand {
			continue
		}
		g.Go(func() error {
			q, err := w.write(gctx, specs[i])
			mu.Lock()
			answered++
			cfg.report("queries", answered, asked)
			mu.Unlock()
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				mu.Lock()
				stats.ModelFallbacks++
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return nil
			}
			if len(coherence.CheckQuery(q, specs[i].context())) > 0 {
				mu.Lock()
				stats.ModelIncoherent++
				mu.Unlock()
				return nil // the template query stays
			}
			out[i].Turns[0].Query, out[i].QuerySource = q, dialog.QuerySourceLLM
			return nil
		})
	}
	werr := g.Wait()
	if err := errors.Join(werr, w.close()); err != nil {
		return err
	}
	if asked > 0 && stats.ModelFallbacks == asked {
		return fmt.Errorf("every query request failed, e.g.: %w", firstErr)
	}
	if stats.ModelFallbacks > 0 {
		log.Warn("some queries fell back to templates", zap.Int("fallbacks", stats.ModelFallbacks), zap.Error(firstErr))
	}
	return nil
}

// makeConfig realises plan row i on a file of the index.
func makeConfig(idx *index, pl *profiles.Plan, cfg Config, i int, vals map[string]string) (dialog.ChatConfig, querySpec, bool) {
	lang, behaviour := vals[vocab.DimLanguage], vals[vocab.DimCursor]
	files := idx.eligible[lang][behaviour]
	if len(files) == 0 {
		return dialog.ChatConfig{}, querySpec{}, false
	}
	if vals[vocab.DimReference] == vocab.RefOpenFiles {
		// Files whose repository has another file to open, when there
		// are any (IndexRepos counts open_files as realisable then).
		if with := slices.DeleteFunc(slices.Clone(files), func(e *fileEntry) bool { return !idx.hasOpenFiles(e) }); len(with) > 0 {
			files = with
		}
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(i)))
	f := files[rng.IntN(len(files))]
	cs := f.cands[behaviour]
	cd := cs[rng.IntN(len(cs))]
	c := dialog.ChatConfig{
		ID: fmt.Sprintf("%s-%05d", pl.ID, i), Repo: f.repo, File: f.rel, Language: lang,
		Trigger: vals[vocab.DimTrigger], Instruction: vals[vocab.DimInstruction],
		Turns:  []dialog.TurnSpec{{}},
		Locale: vals[vocab.DimLocale], Intent: vals[vocab.DimIntent], Difficulty: vals[vocab.DimDifficulty],
		CursorBehaviour: behaviour, Reference: vals[vocab.DimReference], QueryStyle: vals[vocab.DimQueryStyle],
		PlanCell: profiles.CellKey(vals),
	}
	code, from, to := place(f, cd, behaviour, cfg.ContextLines, rng, &c)
	if cd.fn >= 0 {
		c.Symbol = f.p.funcs[cd.fn].name
	}
	if c.Reference == vocab.RefOpenFiles {
		c.OpenFiles = openFiles(idx, f, rng)
	}
	if turns, _ := strconv.Atoi(vals[vocab.DimTurns]); turns > 1 {
		c.FollowUp = &dialog.FollowUpPolicy{}
		prev := c.Intent
		for range turns - 1 {
			// Each kind suits the turn before it; no kind twice in a row.
			choices := slices.DeleteFunc(followUpKinds(prev), func(k string) bool { return k == prev })
			prev = choices[rng.IntN(len(choices))]
			c.FollowUp.Kinds = append(c.FollowUp.Kinds, prev)
		}
	}
	spec := querySpec{Intent: c.Intent, Locale: c.Locale, Difficulty: c.Difficulty, Style: c.QueryStyle,
		Instruction: c.Instruction, Reference: c.Reference, Language: lang, File: c.File, Symbol: c.Symbol,
		OpenFiles: c.OpenFiles, Code: code, TypoRate: cfg.TypoRate}
	if strings.HasSuffix(c.QueryStyle, "_code") && c.Instruction != dialog.InstructionCommand {
		spec.Paste = choosePaste(idx, f, c.Symbol, c.OpenFiles, from, to, rng)
	}
	return c, spec, true
}

// place sets the config's cursor and selection for the candidate and
// returns the code in view (what the plugin will send) and the rows it
// covers.
func place(f *fileEntry, cd cand, behaviour string, ctxLines int, rng *rand.Rand, c *dialog.ChatConfig) (code string, from, to int) {
	p := f.p
	switch behaviour {
	case vocab.CursorIdle:
		c.Cursor = &dialog.Position{Line: cd.row + 1, Col: 1}
		return p.text(cd.row-ctxLines, cd.row+ctxLines), cd.row - ctxLines, cd.row + ctxLines
	case vocab.CursorInsideFunction:
		s, e := p.trimmed(cd.row)
		first := p.col(cd.row, s)
		c.Cursor = &dialog.Position{Line: cd.row + 1, Col: first + rng.IntN(p.col(cd.row, e)-first+1)}
		return p.text(cd.row-ctxLines, cd.row+ctxLines), cd.row - ctxLines, cd.row + ctxLines
	case vocab.CursorSingleLine:
		s, e := p.trimmed(cd.row)
		c.Selection = &dialog.Selection{Start: dialog.Position{Line: cd.row + 1, Col: p.col(cd.row, s)},
			End: dialog.Position{Line: cd.row + 1, Col: p.col(cd.row, e)}}
		end := c.Selection.End
		c.Cursor = &end
		return string(p.line(cd.row)[s:e]), cd.row, cd.row
	}
	sp := cd.sp
	c.Selection = &dialog.Selection{Start: dialog.Position{Line: sp.startRow + 1, Col: p.col(sp.startRow, sp.startCol)},
		End: dialog.Position{Line: sp.endRow + 1, Col: p.col(sp.endRow, sp.endCol)}}
	end := c.Selection.End
	c.Cursor = &end
	start := p.lineStart[sp.startRow] + sp.startCol
	stop := min(p.lineStart[sp.endRow]+sp.endCol, len(p.src))
	return string(p.src[start:stop]), sp.startRow, sp.endRow
}

// openFiles picks one or two other secret-free files of the same
// repository, same language first.
func openFiles(idx *index, f *fileEntry, rng *rand.Rand) []string {
	var same, other []string
	for _, e := range idx.cleanByRepo[f.repo] {
		switch {
		case e == f:
		case e.lang == f.lang:
			same = append(same, e.rel)
		default:
			other = append(other, e.rel)
		}
	}
	pool := append(same, other...)
	if len(pool) == 0 {
		return nil
	}
	n := min(1+rng.IntN(2), len(pool))
	var out []string
	for _, k := range rng.Perm(len(pool))[:n] {
		out = append(out, pool[k])
	}
	return out
}

// WriteConfigs writes configs as JSONL, atomically.
func WriteConfigs(path string, configs []dialog.ChatConfig) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, c := range configs {
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("encode config %s: %w", c.ID, err)
		}
	}
	return runfiles.WriteAtomic(path, buf.Bytes())
}

// Summary renders the stats in a few lines of plain text for a terminal.
func (s Stats) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "configs: %d (queries: %s; model fallbacks: %d)\n", s.Configs, counts(s.QuerySources), s.ModelFallbacks)
	fmt.Fprintf(&b, "source files: %d found; indexed: %s\n", s.Candidates, counts(s.Indexed))
	fmt.Fprintf(&b, "skipped files: %s; skipped directories: %s\n", counts(s.SkippedFiles), counts(s.SkippedDirs))
	fmt.Fprintf(&b, "secrets: %d files with findings, %d candidate regions left out\n", s.FilesWithSecrets, s.SecretRegions)
	fmt.Fprintf(&b, "coherence: findings %s; %d template queries reworded, %d configs dropped, %d model queries replaced by templates; %d _code queries with nothing to paste\n",
		counts(s.Incoherent), s.Regenerated, s.IncoherentDropped, s.ModelIncoherent, s.CodeUnpasted)
	if len(s.Unfulfilled) > 0 {
		fmt.Fprintf(&b, "unfulfilled (no usable file for language/cursor): %s\n", counts(s.Unfulfilled))
	}
	return b.String()
}

// counts renders a count per name as "a 2, b 18", sorted by name, or
// "none".
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
