package analyst

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/runfiles"
)

// Item is one query to classify.
type Item struct {
	ID       string `json:"id"`
	Language string `json:"language,omitempty"`
	Query    string `json:"query"`
}

// Label sources.
const (
	SourceLLM     = "llm"
	SourceCache   = "cache"
	SourceKeyword = "keyword-fallback"
	// SourceKeywordUnusable marks items a model was asked about but whose
	// answer, twice, had no usable label for them.
	SourceKeywordUnusable = "keyword-fallback (model answer unusable)"
)

// Label is an item's intent and difficulty and who decided them.
type Label struct {
	Intent     string `json:"intent"`
	Difficulty string `json:"difficulty"`
	Source     string `json:"source,omitempty"`
}

// Classifier labels queries with intent and difficulty; the result has
// one label per item, in order.
type Classifier interface {
	Classify(ctx context.Context, items []Item) ([]Label, error)
}

var (
	_ Classifier = (*LLMClassifier)(nil)
	_ Classifier = KeywordClassifier{}
)

// ClassifyConfig configures the LLM classifier.
type ClassifyConfig struct {
	// Model labels the queries; nil means no model.
	Model Model
	// BatchSize queries go in one request; Concurrency requests run at once.
	BatchSize   int
	Concurrency int
	// CachePath, when set, is a JSON file of earlier answers keyed by model
	// and query; it is read at start and rewritten (atomically) at the end.
	CachePath string
	// Progress, when set, is called after each request with the number of
	// queries sent to the model so far and in all.
	Progress func(done, total int)
}

// DefaultClassifyConfig: no model, 20 queries a request, 4 requests at once.
func DefaultClassifyConfig() ClassifyConfig {
	return ClassifyConfig{BatchSize: 20, Concurrency: 4}
}

// promptVersion changes when the prompt does, invalidating cached labels.
const promptVersion = "classify-v1"

// LLMClassifier asks an OpenAI-compatible model for labels, in batches,
// with an answer cache.
type LLMClassifier struct {
	cfg   ClassifyConfig
	chat  Model
	log   *zap.Logger
	mu    sync.Mutex
	cache map[string]Label
	dirty bool
}

// NewLLMClassifier builds a classifier for cfg.Model, loading the cache.
func NewLLMClassifier(cfg ClassifyConfig, log *zap.Logger) (*LLMClassifier, error) {
	if cfg.Model == nil {
		return nil, errors.New("llm classifier: no model configured")
	}
	cfg.BatchSize = max(cfg.BatchSize, 1)
	cfg.Concurrency = max(cfg.Concurrency, 1)
	c := &LLMClassifier{cfg: cfg, chat: cfg.Model, log: log, cache: map[string]Label{}}
	if cfg.CachePath != "" {
		data, err := os.ReadFile(cfg.CachePath)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("read classifier cache: %w", err)
		default:
			if err := json.Unmarshal(data, &c.cache); err != nil {
				return nil, fmt.Errorf("read classifier cache %s: %w", cfg.CachePath, err)
			}
		}
	}
	return c, nil
}

func (c *LLMClassifier) key(it Item) string {
	h := sha256.Sum256([]byte(c.cfg.Model.Model() + "\x00" + promptVersion + "\x00" + it.Language + "\x00" + it.Query))
	return hex.EncodeToString(h[:])
}

// Classify labels items: cached answers first, the rest in batches.
func (c *LLMClassifier) Classify(ctx context.Context, items []Item) ([]Label, error) {
	out := make([]Label, len(items))
	var todo []int
	seen := map[string]bool{}
	c.mu.Lock()
	for i, it := range items {
		if l, ok := c.cache[c.key(it)]; ok {
			l.Source = SourceCache
			out[i] = l
		} else if k := c.key(it); !seen[k] {
			seen[k] = true
			todo = append(todo, i)
		}
	}
	c.mu.Unlock()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Concurrency)
	var pmu sync.Mutex
	done := 0
	for start := 0; start < len(todo); start += c.cfg.BatchSize {
		batch := todo[start:min(start+c.cfg.BatchSize, len(todo))]
		g.Go(func() error {
			err := c.classifyBatch(gctx, items, batch, out)
			if c.cfg.Progress != nil {
				pmu.Lock()
				done += len(batch)
				c.cfg.Progress(done, len(todo))
				pmu.Unlock()
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Duplicates of a classified query take its label.
	c.mu.Lock()
	for i, it := range items {
		if out[i].Intent == "" {
			l := c.cache[c.key(it)]
			l.Source = SourceCache
			out[i] = l
		}
	}
	c.mu.Unlock()
	for i, l := range out {
		if l.Intent == "" { // unusable answer, never cached
			out[i] = keywordLabel(items[i].Query)
			out[i].Source = SourceKeywordUnusable
		}
	}
	return out, c.save()
}

func (c *LLMClassifier) classifyBatch(ctx context.Context, items []Item, batch []int, out []Label) error {
	for attempt := 0; attempt < 2 && len(batch) > 0; attempt++ {
		ids := make([]Item, len(batch))
		for k, i := range batch {
			ids[k] = Item{ID: fmt.Sprintf("q%d", k+1), Language: items[i].Language, Query: items[i].Query}
		}
		user, _ := json.MarshalIndent(ids, "", " ")
		answer, err := c.chat.Complete(ctx, []dialog.Message{
			{Role: "system", Content: classifySystemPrompt()},
			{Role: "user", Content: "Queries:\n" + string(user)},
		})
		if err != nil {
			return fmt.Errorf("classify %d queries: %w", len(batch), err)
		}
		got := parseLabels(answer.Text)
		var retry []int
		c.mu.Lock()
		for k, i := range batch {
			l, ok := got[ids[k].ID]
			if !ok {
				retry = append(retry, i)
				continue
			}
			l.Source = SourceLLM
			out[i] = l
			c.cache[c.key(items[i])] = Label{Intent: l.Intent, Difficulty: l.Difficulty}
			c.dirty = true
		}
		c.mu.Unlock()
		if len(retry) > 0 {
			c.log.Warn("model answer lacked usable labels", zap.Int("missing", len(retry)), zap.Int("batch", len(batch)),
				zap.Int("attempt", attempt+1))
		}
		batch = retry
	}
	return nil
}

func (c *LLMClassifier) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.CachePath == "" || !c.dirty {
		return nil
	}
	data, err := json.MarshalIndent(c.cache, "", " ")
	if err != nil {
		return fmt.Errorf("encode classifier cache: %w", err)
	}
	if err := runfiles.WriteAtomic(c.cfg.CachePath, data); err != nil {
		return fmt.Errorf("save classifier cache: %w", err)
	}
	c.dirty = false
	return nil
}

func classifySystemPrompt() string {
	return `You label queries developers sent to an IDE code assistant.
For each query decide its intent and difficulty.
Intents:
- explain: understand what existing code does or why
- generate: write new code from a description
- fix: repair a bug, an error or failing behaviour
- tests: write or extend tests
- docs: add comments, docstrings or documentation
- optimize: make code faster or use less memory
- refactor: restructure or clean up code without changing behaviour
- question: a general programming question not about the code in view
Difficulties:
- easy: a beginner could answer in a minute
- medium: needs some knowledge of the language or library
- hard: concurrency, performance, security, tricky algorithms or several interacting parts
Answer with only a JSON object, no prose:
{"labels":[{"id":"q1","intent":"explain","difficulty":"easy"}]}
with exactly one entry per query id.`
}

// parseLabels reads the model's answer leniently: code fences and text
// around the JSON are ignored, a bare array is accepted, values are
// normalised; entries with unknown values are left out.
func parseLabels(answer string) map[string]Label {
	s := strings.TrimSpace(answer)
	var raw []struct{ ID, Intent, Difficulty string }
	if i, j := strings.Index(s, "{"), strings.LastIndex(s, "}"); i >= 0 && j > i {
		var obj struct {
			Labels []struct{ ID, Intent, Difficulty string }
		}
		if json.Unmarshal([]byte(s[i:j+1]), &obj) == nil {
			raw = obj.Labels
		}
	}
	if raw == nil {
		if i, j := strings.Index(s, "["), strings.LastIndex(s, "]"); i >= 0 && j > i {
			_ = json.Unmarshal([]byte(s[i:j+1]), &raw)
		}
	}
	out := map[string]Label{}
	for _, r := range raw {
		intent, diff := vocab.Intent(r.Intent), vocab.Canonical(vocab.DimDifficulty, r.Difficulty)
		if intent == "" || diff == "" {
			continue
		}
		out[strings.TrimSpace(r.ID)] = Label{Intent: intent, Difficulty: diff}
	}
	return out
}
