package pipeline

import (
	"path/filepath"

	"dialogfarm/dashboard"
	"dialogfarm/sft"
)

// DashboardSources picks the files of a run the dashboard shows: the
// dialogues and configs the (first) report node read, or else the first
// drive node's, and that report; turns count as kept by the first export
// node's params.
func DashboardSources(spec *Spec, nodes []NodeState, out string) dashboard.Sources {
	src := dashboard.Sources{Dir: out, Export: sft.DefaultOptions()}
	if spec == nil { // a folder of dialogfarm run: its files have their usual names
		path := func(f string) string { return filepath.Join(out, f) }
		src.Dialogues, src.Configs, src.Report = path(DialoguesFile), path(ConfigsFile), path(ReportFile)
		return src
	}
	outputOf := func(ref string) string {
		r := ParseRef(ref)
		for _, st := range nodes {
			if st.ID != r.Node {
				continue
			}
			for name, v := range st.Outputs {
				if r.Port == "" || r.Port == name {
					return v.Path
				}
			}
		}
		return ""
	}
	reg := NewRegistry()
	for _, id := range spec.NodeIDs() {
		n := spec.Node(id)
		switch n.Op {
		case "report":
			if src.Report == "" {
				src.Report = outputOf(n.ID)
				src.Dialogues, src.Configs = outputOf(n.Inputs["dialogues"]), outputOf(n.Inputs["configs"])
			}
		case "drive":
			if src.Dialogues == "" {
				src.Dialogues, src.Configs = outputOf(n.ID), outputOf(n.Inputs["configs"])
			}
		case "export":
			if op := reg.Get("export"); op != nil && src.Export == sft.DefaultOptions() {
				x := &nodeRun{node: n, params: op.withDefaults(n.Params)}
				if opt, err := x.exportOptions(); err == nil {
					src.Export = opt
				}
			}
		}
	}
	if src.Dialogues == "" {
		for _, st := range nodes {
			for _, v := range st.Outputs {
				if v.Type == TypeDialogues && src.Dialogues == "" {
					src.Dialogues = v.Path
				}
			}
		}
	}
	if src.Dialogues == "" {
		src.Dialogues = filepath.Join(out, DialoguesFile)
	}
	return src
}

// WriteDashboard writes OUT/dashboard.html for a finished run.
func WriteDashboard(spec *Spec, nodes []NodeState, out, status string) error {
	d, err := dashboard.Build(DashboardSources(spec, nodes, out))
	if err != nil {
		return err
	}
	d.Progress.Status = status
	return dashboard.WriteFile(out, d)
}
