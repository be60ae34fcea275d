// Package vsix packs an unpacked VS Code extension folder into a .vsix, the
// zip that `code-server --install-extension` takes: extension.vsixmanifest,
// [Content_Types].xml and the folder's files under extension/. It stands in
// for `vsce package` in tests, with no Node build step.
package vsix

import (
	"archive/zip"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

type manifest struct {
	Publisher   string `json:"publisher"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
	Engines     struct {
		VSCode string `json:"vscode"`
	} `json:"engines"`
}

// Pack writes the extension in dir (its package.json at the top) to out.
func Pack(dir, out string) error {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return fmt.Errorf("pack vsix: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("pack vsix: parse %s: %w", filepath.Join(dir, "package.json"), err)
	}
	if m.Publisher == "" || m.Name == "" || m.Version == "" {
		return fmt.Errorf("pack vsix: %s needs publisher, name and version", filepath.Join(dir, "package.json"))
	}
	var files []string
	exts := map[string]bool{".vsixmanifest": true}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		if e := path.Ext(rel); e != "" {
			exts[e] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pack vsix: %w", err)
	}
	slices.Sort(files)
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("pack vsix: %w", err)
	}
	z := zip.NewWriter(f)
	write := func(name string, data []byte) error {
		w, err := z.Create(name)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	err = write("extension.vsixmanifest", []byte(vsixManifest(m)))
	if err == nil {
		err = write("[Content_Types].xml", []byte(contentTypes(exts)))
	}
	for _, rel := range files {
		if err != nil {
			break
		}
		var data []byte
		if data, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
			err = write("extension/"+rel, data)
		}
	}
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pack vsix %s: %w", out, err)
	}
	return nil
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func vsixManifest(m manifest) string {
	return `<?xml version="1.0" encoding="utf-8"?>
<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011" xmlns:d="http://schemas.microsoft.com/developer/vsx-schema-design/2011">
  <Metadata>
    <Identity Language="en-US" Id="` + esc(m.Name) + `" Version="` + esc(m.Version) + `" Publisher="` + esc(m.Publisher) + `" />
    <DisplayName>` + esc(m.DisplayName) + `</DisplayName>
    <Description xml:space="preserve">` + esc(m.Description) + `</Description>
    <Categories>Other</Categories>
    <GalleryFlags>Public</GalleryFlags>
    <Properties>
      <Property Id="Microsoft.VisualStudio.Code.Engine" Value="` + esc(m.Engines.VSCode) + `" />
    </Properties>
  </Metadata>
  <Installation>
    <InstallationTarget Id="Microsoft.VisualStudio.Code"/>
  </Installation>
  <Dependencies/>
  <Assets>
    <Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" Addressable="true" />
  </Assets>
</PackageManifest>
`
}

var mimeTypes = map[string]string{
	".json": "application/json", ".js": "application/javascript", ".css": "text/css", ".svg": "image/svg+xml",
	".png": "image/png", ".md": "text/markdown", ".html": "text/html", ".vsixmanifest": "text/xml",
}

func contentTypes(exts map[string]bool) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`)
	keys := make([]string, 0, len(exts))
	for e := range exts {
		keys = append(keys, e)
	}
	slices.Sort(keys)
	for _, e := range keys {
		t, ok := mimeTypes[e]
		if !ok {
			t = "application/octet-stream"
		}
		fmt.Fprintf(&b, `<Default Extension="%s" ContentType="%s"/>`, esc(e), t)
	}
	b.WriteString("</Types>\n")
	return b.String()
}
