package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/sft"
)

// TestConsumersAccept runs each consumer's documented rules on every
// dataset folder the fixture gives. Python cannot be installed here, so
// the rules are encoded in Go; each says where it comes from.
func TestConsumersAccept(t *testing.T) {
	for name, dir := range buildAll(t) {
		t.Run(name, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			want := 2 // train and validation
			if strings.HasSuffix(name, sft.MetaSidecar) {
				want = 4 // and their sidecars
			}
			if len(files) != want {
				t.Fatalf("JSONL files %v, want %d", files, want)
			}
			for _, f := range files {
				if err := hfOneSchema(f); err != nil {
					t.Error(err)
				}
			}
			if err := llamaFactoryAccepts(dir); err != nil {
				t.Error(err)
			}
			if strings.HasPrefix(name, sft.FormatOpenAI) && !strings.HasSuffix(name, sft.MetaInline) {
				for _, f := range []string{TrainFile, ValidationFile} {
					if err := openAIAccepts(filepath.Join(dir, f), 16385); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
}

// TestConsumersAcceptFolder runs the same rules on a dataset folder made
// elsewhere, e.g. by a real run: DATASET_DIR=out/run1/dataset go test
// -run TestConsumersAcceptFolder ./dataset. Without DATASET_DIR it skips.
func TestConsumersAcceptFolder(t *testing.T) {
	dir := os.Getenv("DATASET_DIR")
	if dir == "" {
		t.Skip("DATASET_DIR names no dataset folder")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		t.Fatalf("no JSONL file in %s", dir)
	}
	for _, f := range files {
		if err := hfOneSchema(f); err != nil {
			t.Error(err)
		}
	}
	if err := llamaFactoryAccepts(dir); err != nil {
		t.Error(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, StatsFile))
	if err != nil {
		t.Fatal(err)
	}
	var st Stats
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if st.Format == sft.FormatOpenAI && st.Meta != sft.MetaInline {
		limit := st.MaxTokens
		if limit == 0 {
			limit = 16385
		}
		for _, f := range []string{TrainFile, ValidationFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				if err := openAIAccepts(filepath.Join(dir, f), limit); err != nil {
					t.Error(err)
				}
			}
		}
	}
	t.Logf("%s: %d records (%d train, %d validation) pass", dir, st.Records, st.Splits[SplitTrain], st.Splits[SplitValidation])
}

// TestConsumerRulesCatch checks that each rule rejects what it must, so a
// pass above means something.
func TestConsumerRulesCatch(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	msgs := `"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`
	for _, c := range []struct {
		name string
		rule func(string) error
		bad  []string
	}{
		{"missing key", hfOneSchema, []string{`{` + msgs + `,"meta":{"a":"x"}}`, `{` + msgs + `}`}},
		{"int then float", hfOneSchema, []string{`{"score":5}`, `{"score":4.5}`}},
		{"null then string", hfOneSchema, []string{`{"member":null}`, `{"member":"a"}`}},
		{"empty then full list", hfOneSchema, []string{`{"d":[]}`, `{"d":[{"rule":"x"}]}`}},
		{"developer role", func(p string) error { return openAIAccepts(p, 100) }, []string{`{"messages":[{"role":"developer","content":"x"},{"role":"user","content":"hi"},{"role":"assistant","content":"a"}]}`}},
		{"empty content", func(p string) error { return openAIAccepts(p, 100) }, []string{`{"messages":[{"role":"user","content":""},{"role":"assistant","content":"a"}]}`}},
		{"user last", func(p string) error { return openAIAccepts(p, 100) }, []string{`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"q2"}]}`}},
		{"too long", func(p string) error { return openAIAccepts(p, 10) }, []string{`{` + msgs + `}`}},
		{"extra key", func(p string) error { return openAIAccepts(p, 100) }, []string{`{` + msgs + `,"metadata":{}}`}},
	} {
		if err := c.rule(write(strings.ReplaceAll(c.name, " ", "_")+".jsonl", c.bad...)); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	info := `{"x":{"file_name":"x.jsonl","formatting":"sharegpt","columns":{"messages":"conversations"}}}`
	if err := os.WriteFile(filepath.Join(dir, InfoFile), []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"conversations":[{"from":"system","value":"s"},{"from":"system","value":"s2"},{"from":"human","value":"q"},{"from":"gpt","value":"a"}]}`,
		`{"conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"a"},{"from":"human","value":"q2"}]}`,
		`{"conversations":[{"from":"gpt","value":"a"},{"from":"human","value":"q"}]}`,
	} {
		write("x.jsonl", bad)
		if err := llamaFactoryAccepts(dir); err == nil {
			t.Errorf("LLaMA-Factory rule accepted %s", bad)
		}
	}
}

// hfOneSchema encodes the Hugging Face datasets JSON loader's rule: it
// reads a JSONL file in blocks, infers an Arrow schema from the first
// block and casts every later block to it
// (src/datasets/packaged_modules/json/json.py and ArrowWriter.write_table
// → table_cast). A key missing on some lines fails with "Couldn't cast
// ... because column names don't match" (huggingface/datasets#7169), a
// column that is null (or an empty list) in the first block and a string
// (or a list of objects) later fails with "Couldn't cast array of type
// string to null" (#7222), and int64 does not cast to a later double. So:
// every line has the same keys with the same JSON types, recursively, no
// nulls, no empty lists, and numbers are either all integers or all
// floats per key.
func hfOneSchema(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	want := ""
	for n := 1; sc.Scan(); n++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
		sig, err := typeSig(v)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if want == "" {
			want = sig
		} else if sig != want {
			return fmt.Errorf("%s line %d: schema %s differs from line 1's %s", path, n, sig, want)
		}
	}
	return sc.Err()
}

func typeSig(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", fmt.Errorf("a null value")
	case bool:
		return "bool", nil
	case string:
		return "string", nil
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "float", nil
		}
		return "int", nil
	case []any:
		if len(x) == 0 {
			return "", fmt.Errorf("an empty list (its element type cannot be inferred)")
		}
		elem := ""
		for _, e := range x {
			s, err := typeSig(e)
			if err != nil {
				return "", err
			}
			if elem != "" && s != elem {
				return "", fmt.Errorf("a list mixing %s and %s", elem, s)
			}
			elem = s
		}
		return "[" + elem + "]", nil
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			s, err := typeSig(x[k])
			if err != nil {
				return "", fmt.Errorf("%s: %w", k, err)
			}
			parts = append(parts, k+":"+s)
		}
		return "{" + strings.Join(parts, ",") + "}", nil
	}
	return "", fmt.Errorf("unexpected %T", v)
}

// llamaFactoryAccepts encodes how LLaMA-Factory reads the folder's
// dataset_info.json entries: data/README.md (the sharegpt format, and the
// "OpenAI format" as its special case with role/content tags and
// user/assistant/system tag values) and src/llamafactory/data/converter.py
// (SharegptDatasetConverter): a first message with the system tag becomes
// the system prompt; after it, messages at even positions must carry the
// user (or observation) tag and at odd positions the assistant (or
// function) tag, else "Invalid role tag" and the example is skipped; an
// odd number of them gives "Invalid message count" and a skip. Tags
// default to from/value/human/gpt/system (DatasetAttr in parser.py).
func llamaFactoryAccepts(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, InfoFile))
	if err != nil {
		return err
	}
	var info map[string]struct {
		FileName   string            `json:"file_name"`
		Formatting string            `json:"formatting"`
		Columns    map[string]string `json:"columns"`
		Tags       map[string]string `json:"tags"`
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return fmt.Errorf("%s: %w", InfoFile, err)
	}
	if len(info) == 0 {
		return fmt.Errorf("%s has no entry", InfoFile)
	}
	for name, e := range info {
		tag := func(key, def string) string {
			if v, ok := e.Tags[key]; ok {
				return v
			}
			return def
		}
		role, content := tag("role_tag", "from"), tag("content_tag", "value")
		user, assistant, system := tag("user_tag", "human"), tag("assistant_tag", "gpt"), tag("system_tag", "system")
		col := e.Columns["messages"]
		if e.Formatting != "sharegpt" || col == "" {
			return fmt.Errorf("%s: formatting %q, messages column %q", name, e.Formatting, col)
		}
		lines, err := readJSONL(filepath.Join(dir, e.FileName))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for n, line := range lines {
			var msgs []map[string]any
			if err := json.Unmarshal(line[col], &msgs); err != nil || len(msgs) == 0 {
				return fmt.Errorf("%s line %d: no %q list", e.FileName, n+1, col)
			}
			if msgs[0][role] == system {
				msgs = msgs[1:]
			}
			for i, m := range msgs {
				want := user
				if i%2 == 1 {
					want = assistant
				}
				if m[role] != want {
					return fmt.Errorf("%s line %d message %d: role tag %v, want %s (Invalid role tag)", e.FileName, n+1, i, m[role], want)
				}
				if _, ok := m[content].(string); !ok {
					return fmt.Errorf("%s line %d message %d: no %q string", e.FileName, n+1, i, content)
				}
			}
			if len(msgs) == 0 || len(msgs)%2 != 0 {
				return fmt.Errorf("%s line %d: %d messages after the system prompt (Invalid message count)", e.FileName, n+1, len(msgs))
			}
		}
	}
	return nil
}

// openAIAccepts encodes the OpenAI fine-tuning chat format: the
// fine-tuning guide (platform.openai.com/docs/guides/fine-tuning, "Example
// format": each line {"messages": [...]}, roles system/user/assistant, the
// assistant's messages are what is trained) and the cookbook's validator
// (examples/Chat_finetuning_data_prep.ipynb, check_format_errors: message
// keys only role, content, name, function_call, weight; a recognised
// role; content a non-empty string; an assistant message present; and
// MAX_TOKENS_PER_EXAMPLE = 16385 counted with num_tokens_from_messages).
// The last message is the assistant's, as in every example of the guide;
// a line holds no key but messages (and the guide's tools,
// parallel_tool_calls).
func openAIAccepts(path string, maxTokens int) error {
	lines, err := readJSONL(path)
	if err != nil {
		return err
	}
	tok, err := NewTokenizer("o200k_base")
	if err != nil {
		return err
	}
	for n, line := range lines {
		at := fmt.Sprintf("%s line %d", path, n+1)
		for k := range line {
			if k != "messages" && k != "tools" && k != "parallel_tool_calls" {
				return fmt.Errorf("%s: unrecognised key %q", at, k)
			}
		}
		var raw []map[string]any
		if err := json.Unmarshal(line["messages"], &raw); err != nil || len(raw) == 0 {
			return fmt.Errorf("%s: missing messages list", at)
		}
		var msgs []dialog.Message
		for i, m := range raw {
			for k := range m {
				if !slices.Contains([]string{"role", "content", "name", "function_call", "weight"}, k) {
					return fmt.Errorf("%s message %d: unrecognised key %q", at, i, k)
				}
			}
			r, _ := m["role"].(string)
			if !slices.Contains([]string{"system", "user", "assistant", "function"}, r) {
				return fmt.Errorf("%s message %d: unrecognised role %v", at, i, m["role"])
			}
			c, ok := m["content"].(string)
			if !ok || c == "" {
				return fmt.Errorf("%s message %d: missing content", at, i)
			}
			msgs = append(msgs, dialog.Message{Role: r, Content: c})
		}
		if msgs[len(msgs)-1].Role != "assistant" {
			return fmt.Errorf("%s: the last message is %s, not the assistant's", at, msgs[len(msgs)-1].Role)
		}
		if n := tok.CountMessages(msgs); n > maxTokens {
			return fmt.Errorf("%s: %d tokens, over %d", at, n, maxTokens)
		}
	}
	return nil
}

func readJSONL(path string) ([]map[string]json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []map[string]json.RawMessage
	for n, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}
