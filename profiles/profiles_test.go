package profiles

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
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
	want := map[string]int{"colour": 3, "dimensions.intent.explian": 5, "dimensions.trigger.sidebar": 7,
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
	for _, dim := range Dimensions() {
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
			out := Marshal(p, []string{"fitted by test"}, Notes{DimIntent: {"explain": "3 sessions", "": "classified"}})
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
		{"command from panel", map[string]string{DimInstruction: "command", DimTrigger: "panel"}, false},
		{"command from palette", map[string]string{DimInstruction: "command", DimTrigger: "palette", DimIntent: "fix", DimQueryStyle: "terse"}, true},
		{"command for refactor", map[string]string{DimInstruction: "command", DimIntent: "refactor"}, false},
		{"slash optimize", map[string]string{DimInstruction: "slash_command", DimIntent: "optimize"}, true},
		{"slash generate", map[string]string{DimInstruction: "slash_command", DimIntent: "generate"}, false},
		{"selection without selection", map[string]string{DimReference: "selection", DimCursor: "idle"}, false},
		{"tests on idle cursor", map[string]string{DimIntent: "tests", DimCursor: "idle"}, false},
		{"tests inside function", map[string]string{DimIntent: "tests", DimCursor: "inside_function"}, true},
		{"partial combination", map[string]string{DimIntent: "tests"}, true},
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
	p.Dimensions[DimIntent] = append(p.Dimensions[DimIntent], Weight{Value: "dance", Weight: 1})
	p.Dimensions[DimLocale] = []Weight{{Value: "en", Weight: 0}}
	err = p.Validate()
	if err == nil || !strings.Contains(err.Error(), `profile small: dimensions.intent.dance: unknown value "dance"`) {
		t.Errorf("Validate = %v", err)
	}
}
