package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdioAndRunPipeline drives the built binary as users do: an MCP
// client over `dialogfarm mcp` (stdio) builds a pipeline in a store, and
// `dialogfarm run --pipeline` runs the store's YAML of it, writing the SFT
// file and dashboard.html.
func TestMCPStdioAndRunPipeline(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	store := filepath.Join(tmp, "pipelines")
	cmd := exec.Command(bin, "mcp", "--root", root, "--data-root", root, "--store", store, "--runs", filepath.Join(tmp, "runs"))
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "cli-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		data, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		_ = json.Unmarshal(data, &out)
		return out
	}
	dialogues := filepath.Join(root, "sft", "testdata", "dialogues.jsonl")
	res := call("apply_mutations", map[string]any{"pipeline": "curate", "base_revision": 0, "message": "curate", "mutations": []any{
		map[string]any{"op": "add_node", "node": "recorded", "operator": "load_dialogues", "params": map[string]any{"path": dialogues}},
		map[string]any{"op": "add_node", "node": "unique", "operator": "dedup", "params": map[string]any{"near": 0.9}, "inputs": map[string]any{"dialogues": "recorded"}},
		map[string]any{"op": "add_node", "node": "export", "operator": "export", "params": map[string]any{"min_score": 4}, "inputs": map[string]any{"dialogues": "unique"}},
	}})
	if res["committed"] != true {
		t.Fatalf("apply_mutations: %v", res)
	}
	res = call("add_node", map[string]any{"pipeline": "curate", "base_revision": 1, "node": "x", "operator": "exprt"})
	if res["committed"] == true || !strings.Contains(res["findings"].([]any)[0].(map[string]any)["suggestion"].(string), "export") {
		t.Fatalf("made-up operator: %v", res)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}

	out := filepath.Join(tmp, "run")
	run := exec.Command(bin, "run", "--root", root, "--pipeline", filepath.Join(store, "curate.yaml"), "--out", out)
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("run --pipeline: %v\n%s", err, b)
	}
	sftData, err := os.ReadFile(filepath.Join(out, "sft.jsonl"))
	if err != nil || len(sftData) == 0 {
		t.Fatalf("run --pipeline wrote no SFT: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(out, "dashboard.html"))
	if err != nil || !strings.Contains(string(page), `data-plot="keep"`) {
		t.Fatalf("dashboard.html: %v", err)
	}
}
