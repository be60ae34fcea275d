package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"dialogfarm/dialog"
)

// Completer is a chat model the judge asks for scores. pool.Member
// implements it (retries, rate limit, cache and accounting included).
type Completer interface {
	Complete(ctx context.Context, msgs []dialog.Message) (dialog.Candidate, error)
}

// ErrUnparseable marks judge output that stayed unreadable after every
// repair and retry.
var ErrUnparseable = errors.New("unparseable judge output")

// llmScore is the judge model's answer.
type llmScore struct {
	Score  int
	Reason string
	Model  string
}

// score asks the judge model for a score, repairing malformed output and,
// when repair fails, asking again with the parse error up to maxRetries
// times. It returns an error wrapping ErrUnparseable when no attempt gave a
// score; other errors are the model call's.
func score(ctx context.Context, llm Completer, msgs []dialog.Message, maxRetries int) (llmScore, error) {
	var errs []error
	for attempt := 0; ; attempt++ {
		c, err := llm.Complete(ctx, msgs)
		if err != nil {
			return llmScore{}, fmt.Errorf("ask the judge model: %w", err)
		}
		s, reason, perr := parseScore(c.Text)
		if perr == nil {
			return llmScore{Score: s, Reason: reason, Model: c.Model}, nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w (output %q)", attempt+1, perr, clip(c.Text, 200)))
		if attempt >= maxRetries {
			return llmScore{Model: c.Model}, fmt.Errorf("%w: %w", ErrUnparseable, errors.Join(errs...))
		}
		msgs = append(append([]dialog.Message(nil), msgs...),
			dialog.Message{Role: "assistant", Content: c.Text},
			dialog.Message{Role: "user", Content: fmt.Sprintf(
				"Your reply could not be read (%v). Reply with only a JSON object: "+
					`{"score": <integer 1-5>, "reason": "<one sentence>"}`, perr)})
	}
}

// parseScore reads {"score": n, "reason": "..."} from a judge model's
// output, repairing the usual damage: a Markdown code fence around it,
// prose before or after it, trailing commas, single quotes, a score given
// as a string or as 4.0. A score outside 1..5 is an error, never clamped.
func parseScore(out string) (int, string, error) {
	obj, err := extractObject(out)
	if err != nil {
		return 0, "", err
	}
	var v struct {
		Score  json.RawMessage `json:"score"`
		Reason string          `json:"reason"`
	}
	candidates := []string{obj, trailingComma.ReplaceAllString(obj, "$1")}
	if !strings.Contains(obj, `"`) {
		candidates = append(candidates, trailingComma.ReplaceAllString(strings.ReplaceAll(obj, "'", `"`), "$1"))
	}
	for _, c := range candidates {
		if err = json.Unmarshal([]byte(c), &v); err == nil {
			break
		}
	}
	if err != nil {
		return 0, "", fmt.Errorf("not a JSON object: %w", err)
	}
	if len(v.Score) == 0 {
		return 0, "", errors.New(`no "score" field`)
	}
	n, err := strconv.ParseFloat(strings.Trim(string(v.Score), `"`), 64)
	if err != nil || n != math.Trunc(n) {
		return 0, "", fmt.Errorf("score %s is not an integer", v.Score)
	}
	if n < 1 || n > 5 {
		return 0, "", fmt.Errorf("score %v is outside 1..5", n)
	}
	return int(n), strings.TrimSpace(v.Reason), nil
}

var trailingComma = regexp.MustCompile(`,\s*([}\]])`)

// extractObject is the first balanced {...} of out, skipping braces inside
// JSON strings.
func extractObject(out string) (string, error) {
	start := strings.IndexByte(out, '{')
	if start < 0 {
		return "", errors.New("no JSON object")
	}
	depth, inStr, esc := 0, byte(0), false
	for i := start; i < len(out); i++ {
		c := out[i]
		switch {
		case esc:
			esc = false
		case inStr != 0 && c == '\\':
			esc = true
		case inStr != 0:
			if c == inStr {
				inStr = 0
			}
		case c == '"' || c == '\'':
			inStr = c
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return out[start : i+1], nil
			}
		}
	}
	return "", errors.New("unterminated JSON object")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
