package tasks

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const stubSrc = `package p

import (
	"fmt"
	"strings"
)

// A uses fmt.
func A() string { return fmt.Sprint(1) }

// B uses strings.
func B(s string) string {
	return strings.ToUpper(s) // upper
}
`

// TestStubAndSpliceGo: stubbing B prunes the import only B used and keeps
// everything else; splicing an answer for B back re-adds the import and
// gives the original file.
func TestStubAndSpliceGo(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.go")
	stubbed, err := stubGo(file, []byte(stubSrc), map[int]bool{12: true})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(stubSrc, "import (\n\t\"fmt\"\n\t\"strings\"\n)", "import (\n\t\"fmt\"\n)", 1)
	want = strings.Replace(want, "\treturn strings.ToUpper(s) // upper\n", "\tpanic(\"TODO: implement B\")\n", 1)
	if d := cmp.Diff(want, string(stubbed)); d != "" {
		t.Fatalf("stubbed (-want +got):\n%s", d)
	}
	back, err := spliceGo(file, stubbed, "func B(s string) string {\n\treturn strings.ToUpper(s) // upper\n}", []string{"B"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(stubSrc, string(back)); d != "" {
		t.Errorf("spliced back (-want +got):\n%s", d)
	}
	if _, err := spliceGo(file, stubbed, "func C() {}", []string{"B"}); err == nil {
		t.Error("an answer defining none of the targets was spliced")
	}
}
