package editor

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"dialogfarm/adapter"
)

// PluginManifest is the part of a VS Code extension's package.json the
// driver reads.
type PluginManifest struct {
	Publisher string `json:"publisher"`
	Name      string `json:"name"`
	Version   string `json:"version"`
}

// ID is publisher.name.
func (m PluginManifest) ID() string { return m.Publisher + "." + m.Name }

// ReadPluginManifest reads dir/package.json.
func ReadPluginManifest(dir string) (PluginManifest, error) {
	var m PluginManifest
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return m, fmt.Errorf("read plugin manifest: %w", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("parse %s: %w", filepath.Join(dir, "package.json"), err)
	}
	if m.Publisher == "" || m.Name == "" || m.Version == "" {
		return m, fmt.Errorf("%s: publisher, name and version are required", filepath.Join(dir, "package.json"))
	}
	return m, nil
}

// AdapterManifest reads the package.json of an adapter's plugin, from its
// folder or from inside its .vsix (extension/package.json).
func AdapterManifest(a *adapter.Adapter) (PluginManifest, error) {
	var m PluginManifest
	return m, DecodeManifest(a, &m)
}

// DecodeManifest decodes the package.json of an adapter's plugin, from
// its folder or from inside its .vsix, into v: what AdapterManifest
// reads, or whatever else of it a caller needs (the views and commands
// it contributes).
func DecodeManifest(a *adapter.Adapter, v any) error {
	data, err := manifestBytes(a)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		name := a.Extension.ID
		if name == "" { // a probe's adapter, made from this manifest
			name = a.Path(a.Extension.Folder + a.Extension.VSIX)
		}
		return fmt.Errorf("parse the package.json of %s: %w", name, err)
	}
	return nil
}

// manifestBytes is the plugin's package.json.
func manifestBytes(a *adapter.Adapter) ([]byte, error) {
	if a.Extension.Folder != "" {
		data, err := os.ReadFile(filepath.Join(a.Path(a.Extension.Folder), "package.json"))
		if err != nil {
			return nil, fmt.Errorf("read plugin manifest: %w", err)
		}
		return data, nil
	}
	path := a.Path(a.Extension.VSIX)
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("read plugin manifest: %w", err)
	}
	defer z.Close()
	f, err := z.Open("extension/package.json")
	if err != nil {
		return nil, fmt.Errorf("read plugin manifest in %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read plugin manifest in %s: %w", path, err)
	}
	return data, nil
}
