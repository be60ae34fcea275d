package profiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/golden"
)

func TestInvalidProfilesGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			_, err := Load(path)
			if err == nil {
				t.Fatal("Load succeeded, want validation errors")
			}
			var fe *dialog.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *dialog.FieldError", err)
			}
			golden.Check(t, strings.TrimSuffix(path, ".yaml")+".golden", []byte(err.Error()+"\n"))
		})
	}
}

func TestFieldErrorsNameFileLineField(t *testing.T) {
	_, err := Load("testdata/invalid/unknown_value.yaml")
	var all []*dialog.FieldError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *dialog.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a FieldError", e)
		}
		all = append(all, fe)
	}
	want := map[string]int{"colour": 3, "dimensions.intent.explian": 5, "dimensions.trigger.toolbar": 7,
		"dimensions.language.rust": 10, "dimensions.turns.11": 12, "dimensions.mood": 15}
	got := map[string]int{}
	for _, fe := range all {
		if fe.File != "testdata/invalid/unknown_value.yaml" {
			t.Errorf("file = %q", fe.File)
		}
		got[fe.Field] = fe.Line
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("field → line (-want +got):\n%s", diff)
	}
}

func TestBuiltinDefault(t *testing.T) {
	p, err := Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "default" || p.Seed != 42 || len(p.Constraints) != 2 {
		t.Errorf("default: name %q seed %d constraints %d", p.Name, p.Seed, len(p.Constraints))
	}
	for _, dim := range vocab.Dimensions() {
		sum := 0.0
		for _, v := range p.Target(dim) {
			sum += v
		}
		if sum < 0.999 || sum > 1.001 {
			t.Errorf("%s: target sums to %v", dim, sum)
		}
	}
	if p2, err := Load("default"); err != nil || p2.Hash() != p.Hash() {
		t.Errorf("Load(\"default\") = %v; hash match %v", err, err == nil && p2.Hash() == p.Hash())
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, name := range []string{"testdata/valid.yaml", "default"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			p, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			out := Marshal(p, []string{"fitted by test"}, Notes{vocab.DimIntent: {"explain": "3 sessions", "": "classified"}})
			q, err := Parse("roundtrip.yaml", out)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out)
			}
			if p.Hash() != q.Hash() {
				t.Errorf("hash changed after round trip:\n%s", out)
			}
			if !strings.Contains(string(out), "# 3 sessions") {
				t.Errorf("note missing:\n%s", out)
			}
		})
	}
}

func TestAllowsStructural(t *testing.T) {
	p, err := Load("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		combo map[string]string
		want  bool
	}{
		{"command from panel", map[string]string{vocab.DimInstruction: "command", vocab.DimTrigger: "panel"}, false},
		{"command from palette", map[string]string{vocab.DimInstruction: "command", vocab.DimTrigger: "palette", vocab.DimIntent: "fix", vocab.DimQueryStyle: "terse"}, true},
		{"command for refactor", map[string]string{vocab.DimInstruction: "command", vocab.DimIntent: "refactor"}, false},
		{"slash optimize", map[string]string{vocab.DimInstruction: "slash_command", vocab.DimIntent: "optimize"}, true},
		{"slash generate", map[string]string{vocab.DimInstruction: "slash_command", vocab.DimIntent: "generate"}, false},
		{"selection without selection", map[string]string{vocab.DimReference: "selection", vocab.DimCursor: "idle"}, false},
		{"tests on idle cursor", map[string]string{vocab.DimIntent: "tests", vocab.DimCursor: "idle"}, false},
		{"tests inside function", map[string]string{vocab.DimIntent: "tests", vocab.DimCursor: "inside_function"}, true},
		{"partial combination", map[string]string{vocab.DimIntent: "tests"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Allows(tt.combo); got != tt.want {
				t.Errorf("Allows(%v) = %v, want %v", tt.combo, got, tt.want)
			}
		})
	}
}

func TestValidateBuiltInCode(t *testing.T) {
	p, err := Load("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("valid profile: %v", err)
	}
	p.Source = ""
	p.Dimensions[vocab.DimIntent] = append(p.Dimensions[vocab.DimIntent], Weight{Value: "dance", Weight: 1})
	p.Dimensions[vocab.DimLocale] = []Weight{{Value: "en", Weight: 0}}
	err = p.Validate()
	if err == nil || !strings.Contains(err.Error(), `profile small: dimensions.intent.dance: unknown value "dance"`) {
		t.Errorf("Validate = %v", err)
	}
}

// TestOlderSpellingsLoad: a profile that spells values the older ways
// ("optimise", "general", "golang", "zh-CN") loads with the one spelling of
// each, constraints included; two spellings of one value are a clear
// error.
func TestOlderSpellingsLoad(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "older_spellings.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	values := func(dim string) []string {
		var out []string
		for _, w := range p.Dimensions[dim] {
			out = append(out, w.Value)
		}
		return out
	}
	for dim, want := range map[string][]string{
		vocab.DimIntent:      {"explain", "optimize", "question", "tests"},
		vocab.DimInstruction: {"free_text", "slash_command"},
		vocab.DimTrigger:     {"panel", "palette"},
		vocab.DimLanguage:    {"go", "python"},
		vocab.DimLocale:      {"en", "zh"},
	} {
		if got := values(dim); !cmp.Equal(got, want) {
			t.Errorf("%s: %v, want %v", dim, got, want)
		}
	}
	if c := p.Constraints[0]; !cmp.Equal(c.When[vocab.DimIntent], []string{"optimize"}) || !cmp.Equal(c.Require[vocab.DimLanguage], []string{"go"}) {
		t.Errorf("constraint %v", c)
	}

	data, _ := os.ReadFile(filepath.Join("testdata", "older_spellings.yaml"))
	twice := strings.Replace(string(data), "general: 1,", "general: 1, optimize: 2,", 1)
	if _, err := Parse("twice.yaml", []byte(twice)); err == nil || !strings.Contains(err.Error(), "dimensions.intent.optimize: value listed twice") {
		t.Errorf("optimise and optimize: err = %v", err)
	}
	twice = strings.Replace(string(data), "explain: 2,", "explain: 2, optimize: 2,", 1)
	if _, err := Parse("twice.yaml", []byte(twice)); err == nil ||
		!strings.Contains(err.Error(), "dimensions.intent.optimise: value listed twice (optimise is another spelling of optimize)") {
		t.Errorf("optimize and optimise: err = %v", err)
	}
}
