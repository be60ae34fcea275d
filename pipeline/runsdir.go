package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"dialogfarm/driver"
	"dialogfarm/internal/runfiles"
	"dialogfarm/sft"
)

// Statuses of runs known from their folders.
const (
	// RunInterrupted is a run that was running when its server stopped.
	RunInterrupted = "interrupted"
	// RunIncomplete is a folder of `dialogfarm run` that nothing runs now
	// and whose stages did not all finish (a later run resumes it).
	RunIncomplete = "incomplete"
)

// IndexDir is the folder, under the runs folder, that keeps one RunInfo
// per run started by serve or mcp (ID.json), so they outlive the server.
const IndexDir = ".runs"

// save writes a run's info to the index (errors are logged: a run goes
// on without its record).
func (r *Runs) save(info RunInfo) {
	data, err := json.MarshalIndent(info, "", "  ")
	if err == nil {
		if err = runfiles.MkdirAll(filepath.Join(r.dir, IndexDir)); err == nil {
			err = runfiles.WriteAtomic(filepath.Join(r.dir, IndexDir, info.ID+".json"), append(data, '\n'))
		}
	}
	if err != nil {
		r.log.Warn("run not recorded in the runs index", zap.String("run", info.ID), zap.Error(err))
	}
}

// load reads the index; a run it says was running is marked interrupted
// (its server stopped; what it recorded stays and a new run resumes it).
func (r *Runs) load() {
	files, _ := filepath.Glob(filepath.Join(r.dir, IndexDir, "*.json"))
	var infos []RunInfo
	for _, f := range files {
		data, err := os.ReadFile(f)
		var info RunInfo
		if err == nil {
			err = json.Unmarshal(data, &info)
		}
		if err == nil && info.ID != strings.TrimSuffix(filepath.Base(f), ".json") {
			err = fmt.Errorf("id %q does not match the file name", info.ID)
		}
		if err != nil {
			r.log.Warn("runs index: entry skipped", zap.String("file", f), zap.Error(err))
			continue
		}
		if info.Status == RunRunning {
			info.Status, info.Error = RunInterrupted, "the server stopped while it ran; run the pipeline again to resume it"
			if st, err := os.Stat(f); err == nil {
				info.Finished = st.ModTime().UTC()
			}
			for i, n := range info.Nodes {
				if n.Status == NodeRunning || n.Status == NodePending {
					info.Nodes[i].Status = RunInterrupted
				}
			}
			r.save(info)
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b RunInfo) int { return a.Started.Compare(b.Started) })
	for _, info := range infos {
		r.runs[info.ID] = &runEntry{info: info, cancel: func() {}}
		r.ids = append(r.ids, info.ID)
		if n := runNumber(info.ID); n > r.seq {
			r.seq = n
		}
	}
}

// runNumber is N of a run id NAME-N.
func runNumber(id string) int {
	i := strings.LastIndexByte(id, '-')
	n, _ := strconv.Atoi(id[i+1:])
	return n
}

// folders lists the run folders under the runs folder that no run of
// this index wrote: those of `dialogfarm run --out RUNS/NAME`, with their
// status read from their files. Their id is the folder's name.
func (r *Runs) folders(known map[string]bool) []RunInfo {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil
	}
	var out []RunInfo
	for _, e := range entries {
		dir := filepath.Join(r.dir, e.Name())
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || known[dir] || known[e.Name()] {
			continue
		}
		if info, ok := readFolder(dir); ok {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b RunInfo) int { return b.Started.Compare(a.Started) })
	return out
}

// readFolder reads a run folder of `dialogfarm run`: its manifest
// (run.json), its node states when it ran as a pipeline, and its
// records.
func readFolder(dir string) (RunInfo, bool) {
	info := RunInfo{ID: filepath.Base(dir), Out: dir, Pipeline: "run", External: true}
	states, _ := filepath.Glob(filepath.Join(dir, "nodes", "*.state.json"))
	for _, f := range states {
		if st := readState(f); st != nil {
			info.Nodes = append(info.Nodes, *st)
		}
	}
	slices.SortFunc(info.Nodes, func(a, b NodeState) int { return a.Started.Compare(b.Started) })
	mst, err := os.Stat(filepath.Join(dir, ManifestFile))
	switch {
	case err == nil:
		info.Started = mst.ModTime().UTC()
	case len(info.Nodes) > 0: // run --pipeline writes no manifest
		info.Started = info.Nodes[0].Started
	default:
		return info, false
	}
	var last time.Time
	done, failed := len(info.Nodes) > 0, false
	for _, n := range info.Nodes {
		if n.Finished.After(last) {
			last = n.Finished
		}
		done = done && (n.Status == NodeDone || n.Status == NodeCached)
		failed = failed || n.Status == NodeFailed
	}
	if len(info.Nodes) == 0 { // a run folder of the stage list: it has a report when it ended
		if st, err := os.Stat(filepath.Join(dir, ReportFile)); err == nil {
			done, last = true, st.ModTime().UTC()
		}
	}
	if m, ok, err := ReadManifest(dir); err == nil && ok && len(info.Nodes) > 0 {
		// run is RunSpec(DefaultSpec(...)) of the manifest's arguments: the
		// same spec gives its dashboard the files and kept turns it had.
		info.Spec = DefaultSpec(manifestOptions(m))
	}
	busy, _ := driver.FolderBusy(dir)
	switch {
	case busy:
		info.Status = RunRunning
	case failed:
		info.Status = RunFailed
	case done:
		info.Status, info.Finished = RunDone, last
	default:
		info.Status = RunIncomplete
	}
	return info, true
}

// manifestOptions are the arguments of the run a manifest records (its
// latest export settings among them).
func manifestOptions(m Manifest) DefaultOptions {
	exp := sft.DefaultOptions()
	if m.Format != "" {
		exp.Format = m.Format
	}
	if m.Meta != "" {
		exp.Meta = m.Meta
	}
	if m.MinScore != nil {
		exp.MinScore = *m.MinScore
	}
	exp.AllowOffline = m.AllowOffline
	seed := m.Seed
	return DefaultOptions{Profile: m.Profile, N: m.N, Seed: &seed, Repos: m.Repos, Export: exp}
}

// ErrExternal means the run was not started by this server.
var ErrExternal = errors.New("the run was started by dialogfarm run, not by this server")
