# fsmnodes — the two commands a newcomer needs:
#   make run    installs Cyclone DDS from Debian if missing, builds, launches the demo
#   make test   everything CI checks (vet, staticcheck, gofmt, generated code, tests incl. the
#               layering rule, fuzz smoke, colcon)

GO      ?= go
BIN     ?= bin
PREFIX  ?= $(CURDIR)
LAUNCH  ?= launch/demo.launch.xml
FUZZTIME ?= 3s
FUZZPARALLEL ?=
export PATH := /usr/local/go/bin:$(PATH)
# One build flavour for every step: the colcon package (CMakeLists.txt)
# builds with -trimpath, and so do `make build`, vet, the test executables,
# go test and test/ros2, so that they all share one build cache instead of
# compiling every package twice.
export GOFLAGS := $(strip $(GOFLAGS) -trimpath)

.PHONY: all deps build run test vet lint fmt-check generate-check testbin unit ros2-suites fuzz-smoke colcon-check bench bench-foxglove bench-rclcpp bench-velma bench-velma-demo bench-shm clean ros2-peer ros2-test-peers gazebo-peer gazebo-test

all: build

# Installs the Debian packages the project needs when they are missing:
# Cyclone DDS, and openssl (fsmnodes security signs SROS2 documents with it).
deps:
	@if ! dpkg -s cyclonedds-dev >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1; then \
	  echo "installing cyclonedds-dev (Eclipse Cyclone DDS 0.10) and openssl"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq cyclonedds-dev cyclonedds-tools openssl; \
	fi

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/... $$(ls -d ./nodes/*/ 2>/dev/null | sed 's#/$$##')

run: deps build
	@echo "fsmnodes demo: open http://127.0.0.1:8765/ for the dashboard, or connect Foxglove/Lichtblick to ws://127.0.0.1:8765"
	FSMNODES_BIN=$(CURDIR)/$(BIN) FSMNODES_SHARE=$(CURDIR) $(BIN)/fsmnodes launch $(LAUNCH)

# The quick checks first; then the tests, four packages at a time, with at
# most one whole system (a demo, Velma's processes, a browser, a robot
# system on network-namespace hosts) per CPU at once (testenv.Heavy); then
# the fuzz smoke and the colcon build side by side; then test/ros2 against
# each real ROS 2 distro, one after the other. Last, the count of checks test/ros2 ran
# against each distro. (Until session 14 all of these ran side by side: the
# load average reached 80-160 on the two cores, and daemon start-ups, RouDi,
# Velma's loops and Chromium's start-up timed out. In session 14 they ran
# one after the other, the tests two packages at a time but each package
# several systems at once: the load still reached 50-80, and the official
# CI of stop 35 lost a test to a browser 20 s behind its WebSocket.)
test: vet lint fmt-check generate-check
	@rm -f $(ROS2_SUMMARIES)
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory -j2 fuzz-smoke colcon-check FUZZPARALLEL=1
	$(MAKE) --no-print-directory -j1 ros2-suites
	@cat $(ROS2_SUMMARIES) 2>/dev/null || true

# The cgo packages are vetted without -trimpath. With it, go vet's cgocall
# check reads the raw cgo files at the absolute path recorded in the cached
# cgo output of whichever checkout compiled the package first (Go 1.26): in
# a fresh clone that is another, perhaps deleted, directory ("can't parse
# raw cgo file: open /old/clone/internal/dds/cgo.go"), or worse, a live
# checkout with other sources.
CGO_PKGS = $$($(GO) list -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./...)
vet:
	$(GO) vet $$($(GO) list -f '{{if not .CgoFiles}}{{.ImportPath}}{{end}}' ./...)
	GOFLAGS='$(filter-out -trimpath,$(GOFLAGS))' $(GO) vet $(CGO_PKGS)

# staticcheck, pinned; fetched through the Go module proxy on first use.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

generate-check:
	@if [ -x scripts/check-generate.sh ]; then scripts/check-generate.sh; fi

# Every main package is built once into build/testbin; the test packages
# (separate processes run in parallel) take their executables from there
# through internal/testenv instead of each linking its own.
# The packages that run whole systems for a minute or more, mostly waiting
# on real time, go first, the longest first, so that they do not form a tail
# at the end; go test then runs up to UNITP test binaries and compilations
# at once. Their tests take testenv.Heavy slots (FSMNODES_TEST_HEAVY, by
# default one per CPU): at most that many whole systems run at once across
# all packages, whatever UNITP and -parallel allow.
TESTBIN ?= $(CURDIR)/build/testbin
SLOW_PKGS := ./test/multihost ./test/demo ./test/bag ./test/sim ./test/dashboard ./internal/velma/velmanode ./test/fault
UNITP ?= 4
testbin:
	@mkdir -p $(TESTBIN)
	$(GO) build -o $(TESTBIN)/ ./cmd/... ./nodes/... ./test/... ./test/e2e/testdata/cliserver

# Each test that held slots writes a line to HEAVY_LOG (slot-seconds, held,
# waited, slots, the machine's slots, package, test); unit prints the sum
# and the largest.
HEAVY_LOG := $(CURDIR)/build/heavy-slots.log
unit: testbin
	@rm -f $(HEAVY_LOG)
	@FSMNODES_HEAVY_LOG=$(HEAVY_LOG) FSMNODES_TEST_BIN=$(TESTBIN) $(GO) test -count=1 -timeout 15m -p $(UNITP) $(SLOW_PKGS) \
	  $$($(GO) list ./... | sed 's#^github.com/fsmnodes/fsmnodes#.#' | grep -vxF -e ./test/ros2 $(foreach p,$(SLOW_PKGS),-e $(p))); \
	rc=$$?; scripts/heavy-slots.sh $(HEAVY_LOG); exit $$rc

# test/ros2 once per real ROS 2 distro (/opt/ros2-<distro>, `make ros2-peer`),
# the runs side by side; each writes its count of checks to build/ros2-<distro>.summary.
ROS2_DISTROS ?= humble jazzy
ROS2_SUMMARIES := $(foreach d,$(ROS2_DISTROS),build/ros2-$(d).summary)
ros2-suites: $(foreach d,$(ROS2_DISTROS),ros2-suite-$(d))
ros2-suite-%: testbin
	ROS2_PREFIX=/opt/ros2-$* FSMNODES_ROS2_SUMMARY=$(CURDIR)/build/ros2-$*.summary FSMNODES_TEST_BIN=$(TESTBIN) \
	  $(GO) test -count=1 -timeout 15m ./test/ros2

fuzz-smoke:
	FUZZTIME=$(FUZZTIME) FUZZPARALLEL=$(FUZZPARALLEL) scripts/fuzz-smoke.sh

colcon-check:
	@if [ -x scripts/check-colcon.sh ]; then scripts/check-colcon.sh; fi

bench:
	$(GO) run ./test/bench

# foxglove_bridge: 1 kHz JointState + 10 Hz 1 MB map to 3 live clients and a stalled one.
bench-foxglove:
	$(GO) run ./test/bench/foxglove

# Velma's 500 Hz loop as three processes (io buffers) against the single-process
# loop, with and without SCHED_FIFO/mlockall/pinning, quiet and beside busy
# processes: period percentiles, overruns, missed commands, cs's answer
# latency, CPU per process. Figures only. VELMA_BENCH_SECONDS per variant.
VELMA_BENCH_SECONDS ?= 60
bench-velma:
	$(GO) run ./test/bench/velma -seconds $(VELMA_BENCH_SECONDS)

# The whole demo with the dashboard open in headless Chromium, Velma driven
# through joint trajectories for VELMA_DEMO_DURATION: motions sent, succeeded,
# aborted, ve_body's safe entries. Figures only.
VELMA_DEMO_DURATION ?= 10m
bench-velma-demo: build
	$(GO) run ./test/bench/velmademo -d $(VELMA_DEMO_DURATION)

# internal/ros against rclcpp (rmw_cyclonedds_cpp) of a real ROS 2: pub/sub
# throughput and round trips (1 KiB, 1 MiB), service calls/s, with ratios.
bench-rclcpp:
	$(GO) run ./test/bench/rclcpp

# 1 MiB round trips between two of our processes with and without
# Cyclone's shared memory (iceoryx; starts RouDi itself).
bench-shm:
	$(GO) run ./test/bench/shm

# Builds ROS 2 Humble and Jazzy (rclcpp, rclpy, ros2 CLI) into
# /opt/ros2-humble and /opt/ros2-jazzy from the shared/ros2 snapshots beside
# the repo, for test/ros2; each is skipped when built.
ros2-peer:
	scripts/ros2-peer.sh $(ROS2_DISTROS)

# What test/ros2 builds on top of each distro (the interface packages and
# the rclcpp peer, test/ros2/build-peer.sh) into the user cache, where the
# suites find it; .ci/run builds it before make test, so that the suites do
# not build it under the tests' load.
ROS2_PEER_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/fsmnodes/ros2-peer
ros2-test-peers:
	@for d in $(ROS2_DISTROS); do ROS2_PREFIX=/opt/ros2-$$d bash test/ros2/build-peer.sh $(ROS2_PEER_CACHE) || exit 1; done

# Gazebo Fortress + ros_gz into /opt/gz-fortress over the Humble peer: about
# 75 minutes on two idle cores, so CI never starts it (test/gazebo skips without it).
gazebo-peer:
	nice -n 19 scripts/gazebo-peer.sh

# test/gazebo's real Gazebo tests (Humble's ros2 launch of the Gazebo launch
# files against that build, headless): the diffbot on RSM's waypoints, the map,
# the paused clock, a screenshot, the hexapod walking. Minutes, so make test
# skips them; .ci/run runs this when the build is there. Without it they skip.
# The screenshot is kept as build/gazebo-scene.png.
gazebo-test: testbin
	FSMNODES_GAZEBO_TESTS=1 FSMNODES_GAZEBO_SCREENSHOT=$(CURDIR)/build/gazebo-scene.png FSMNODES_TEST_BIN=$(TESTBIN) \
	  $(GO) test -count=1 -timeout 40m -v -run 'TestGazebo_' ./test/gazebo

clean:
	rm -rf $(BIN) build install log
