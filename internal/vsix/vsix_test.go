package vsix

import (
	"archive/zip"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPackQuill(t *testing.T) {
	out := filepath.Join(t.TempDir(), "quill.vsix")
	if err := Pack(filepath.Join("..", "testdata", "quill", "extension"), out); err != nil {
		t.Fatal(err)
	}
	z, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	files := map[string]string{}
	for _, f := range z.File {
		names = append(names, f.Name)
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		files[f.Name] = string(b)
	}
	for _, want := range []string{"extension.vsixmanifest", "[Content_Types].xml", "extension/package.json", "extension/extension.js", "extension/media/main.js"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s missing from %v", want, names)
		}
	}
	if m := files["extension.vsixmanifest"]; !strings.Contains(m, `Id="quill" Version="0.0.1" Publisher="dialogfarm-test"`) || !strings.Contains(m, `Value="^1.90.0"`) {
		t.Errorf("manifest:\n%s", m)
	}
	if ct := files["[Content_Types].xml"]; !strings.Contains(ct, `Extension=".js" ContentType="application/javascript"`) {
		t.Errorf("content types:\n%s", ct)
	}
}

func TestPackNeedsAManifest(t *testing.T) {
	err := Pack(t.TempDir(), filepath.Join(t.TempDir(), "x.vsix"))
	if err == nil || !strings.Contains(err.Error(), "package.json") {
		t.Fatalf("err = %v", err)
	}
}
