package editor

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/adapter"
	"dialogfarm/internal/vsix"
)

// activationAdapter loads an adapter of driver/testdata/activation (the
// driver's end-to-end test drives the same ones).
func activationAdapter(t *testing.T, name string) *adapter.Adapter {
	t.Helper()
	a, err := adapter.Load(filepath.Join("..", "testdata", "activation", name+".yaml"), filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCheckModulesNamesWhatIsNotShipped: the packages the missing-module
// extension requires without shipping them are named, from its folder
// and from a .vsix of it alike, with the script and line; a shipped
// package, one required inside a try, Node's built-ins and vscode are
// not.
func TestCheckModulesNamesWhatIsNotShipped(t *testing.T) {
	folder := activationAdapter(t, "missing-module")
	packed := *folder
	packed.Extension.Folder, packed.Extension.VSIX = "", filepath.Join(t.TempDir(), "missing.vsix")
	if err := vsix.Pack(folder.Path(folder.Extension.Folder), packed.Extension.VSIX); err != nil {
		t.Fatal(err)
	}
	want := []MissingModule{{Name: "udx-native", Script: "extension.js", Line: 5}, {Name: "b4a", Script: "lib/helper.js", Line: 1}}
	for name, a := range map[string]*adapter.Adapter{"folder": folder, "vsix": &packed} {
		t.Run(name, func(t *testing.T) {
			err := CheckModules(a)
			var me *MissingModulesError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want a *MissingModulesError", err)
			}
			if diff := cmp.Diff(want, me.Missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if msg := err.Error(); !strings.Contains(msg, `extension dialogfarm-test.missingmodule`) || !strings.Contains(msg, `Cannot find module 'udx-native'`) {
				t.Errorf("message %q", msg)
			}
		})
	}
	// A computed name cannot be read: that extension fails at activation.
	if err := CheckModules(activationAdapter(t, "throws")); err != nil {
		t.Errorf("throws: %v", err)
	}
}

// TestCheckModulesPassesTheShippedPlugins: the reference plugin and Quill
// require nothing they do not ship.
func TestCheckModulesPassesTheShippedPlugins(t *testing.T) {
	ask, err := adapter.Load("ask", filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckModules(ask); err != nil {
		t.Errorf("ask: %v", err)
	}
	// Quill is installed from a .vsix, packed from its folder.
	quill, err := adapter.Load(filepath.Join("..", "..", "internal", "testdata", "quill", "adapter.yaml"), filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	quill.Extension.VSIX = filepath.Join(t.TempDir(), "quill.vsix")
	if err := vsix.Pack(filepath.Join("..", "..", "internal", "testdata", "quill", "extension"), quill.Extension.VSIX); err != nil {
		t.Fatal(err)
	}
	if err := CheckModules(quill); err != nil {
		t.Errorf("quill: %v", err)
	}
}

func TestRequiresOutsideTry(t *testing.T) {
	src := `const a = require("a");
import b from "b";
function f() { return require('c/sub'); }
try { require("d"); } catch (e) { require("e"); } finally { require("f"); }
try { if (x) { require("g"); } } catch {}
const h = require(name), i = require("i" + j);
var m = { "x"(exports, module) { module.exports = require("@scope/k/deep"); } };
`
	got, err := requires([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []required{{"a", 1}, {"b", 2}, {"c/sub", 3}, {"e", 4}, {"f", 4}, {"@scope/k/deep", 7}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(required{})); diff != "" {
		t.Errorf("requires (-want +got):\n%s", diff)
	}
	if p := packageName("@scope/k/deep"); p != "@scope/k" {
		t.Errorf("packageName = %q", p)
	}
}
