package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// BinEnv names the directory of prebuilt executables. `make test` builds
// every main package of the module into one directory once and sets it, so
// the test packages of that run, which go test runs in parallel processes,
// share one build instead of linking the same executables again each.
const BinEnv = "FSMNODES_TEST_BIN"

// builds holds the executables one test process has built itself (when
// BinEnv is not set): a test harness cache that lives as long as the test
// binary, which is why it is package state.
var builds = struct {
	sync.Mutex
	dir  string
	done map[string]error
}{done: map[string]error{}}

// Executable returns the path of the executable of the main package pkg,
// given relative to the module root ("nodes/velma_bridge", "cmd/fsmnodes",
// "test/gopeer"). It is taken from $FSMNODES_TEST_BIN when that
// holds it; otherwise it is built once per test process into a temporary
// directory that Main removes.
func Executable(t testing.TB, pkg string) string {
	t.Helper()
	p, err := executable(pkg, true)
	if err != nil {
		t.Fatalf("testenv.Executable(%q): %v", pkg, err)
	}
	return p
}

func executable(pkg string, prebuilt bool) (string, error) {
	name := path.Base(pkg)
	if dir := os.Getenv(BinEnv); dir != "" && prebuilt {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	builds.Lock()
	defer builds.Unlock()
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "fsmnodes-testbin-")
		if err != nil {
			return "", err
		}
		builds.dir = dir
	}
	p := filepath.Join(builds.dir, name)
	if err, ok := builds.done[pkg]; ok {
		return p, err
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(GoTool(), "build", "-o", p, "./"+pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		builds.done[pkg] = fmt.Errorf("go build ./%s: %v\n%s", pkg, err, out)
	} else {
		builds.done[pkg] = nil
	}
	return p, builds.done[pkg]
}

// removeBuilds deletes the executables this process built.
func removeBuilds() {
	builds.Lock()
	defer builds.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
		builds.dir = ""
		builds.done = map[string]error{}
	}
}

// ModuleRoot returns the directory of the module's go.mod, found from the
// working directory upwards (a test runs in its package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// GoTool is the go command of the toolchain running the tests: the one on
// PATH, else $GOROOT/bin/go.
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}

// ExecutableDir returns one directory that holds the executables of all of
// pkgs, built as Executable builds them; a pkg ending in "/..." stands for
// every main package (a folder with a main.go) directly under that folder,
// e.g. "nodes/...". Use it for programs that find their peers by directory,
// such as the launcher's --bin-dir.
func ExecutableDir(t testing.TB, pkgs ...string) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatalf("testenv.ExecutableDir: %v", err)
	}
	var all []string
	for _, pkg := range pkgs {
		parent, ok := strings.CutSuffix(pkg, "/...")
		if !ok {
			all = append(all, pkg)
			continue
		}
		mains, err := filepath.Glob(filepath.Join(root, parent, "*", "main.go"))
		if err != nil || len(mains) == 0 {
			t.Fatalf("testenv.ExecutableDir: no main packages under %s", parent)
		}
		for _, m := range mains {
			all = append(all, path.Join(parent, filepath.Base(filepath.Dir(m))))
		}
	}
	if dir := os.Getenv(BinEnv); dir != "" && holdsAll(dir, all) {
		return dir
	}
	// Not all prebuilt: build all of them into this process's directory,
	// those not built yet by one go build, which links them side by side
	// (22 executables: 68 s instead of 93 s one by one on the 2-core
	// machine); a failure is then attributed package by package below.
	buildAll(all)
	var dir string
	for _, pkg := range all {
		p, err := executable(pkg, false)
		if err != nil {
			t.Fatalf("testenv.ExecutableDir: %v", err)
		}
		dir = filepath.Dir(p)
	}
	return dir
}

// buildAll builds the main packages of pkgs this process has not built
// yet with one go build into its directory and records each as built. On
// failure it records nothing: executable then builds each on its own and
// reports which failed.
func buildAll(pkgs []string) {
	builds.Lock()
	defer builds.Unlock()
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "fsmnodes-testbin-")
		if err != nil {
			return
		}
		builds.dir = dir
	}
	root, err := ModuleRoot()
	if err != nil {
		return
	}
	var todo []string
	for _, pkg := range pkgs {
		if _, ok := builds.done[pkg]; !ok && !slices.Contains(todo, pkg) {
			todo = append(todo, pkg)
		}
	}
	if len(todo) < 2 {
		return
	}
	args := []string{"build", "-o", builds.dir + string(filepath.Separator)}
	for _, pkg := range todo {
		args = append(args, "./"+pkg)
	}
	cmd := exec.Command(GoTool(), args...)
	cmd.Dir = root
	if err := cmd.Run(); err != nil {
		return
	}
	for _, pkg := range todo {
		builds.done[pkg] = nil
	}
}

func holdsAll(dir string, pkgs []string) bool {
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, path.Base(pkg))); err != nil {
			return false
		}
	}
	return true
}
