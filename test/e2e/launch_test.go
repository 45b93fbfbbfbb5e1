package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// cliAlive reports whether pid runs (a zombie counts as gone).
func cliAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

func TestLaunch_NodesAppearAndSIGINTLeavesNoProcess(t *testing.T) {
	domainLaunch := testenv.Domain(t)
	bin := cliBins(t)
	pidDir := t.TempDir()
	file, err := filepath.Abs("testdata/launch/peers.launch.xml")
	if err != nil {
		t.Fatal(err)
	}
	launch := cliStart(t, bin, domainLaunch, "fsmnodes", "launch", file, "piddir:="+pidDir, "--bin-dir", bin)

	nodes := cliPoll(t, bin, domainLaunch, func(s string) bool {
		return strings.Contains(s, "/robot_a/peer_one\n") && strings.Contains(s, "/robot_b/peer_two\n")
	}, "node", "list")
	if strings.Contains(nodes, "/cli_test/cli_peer") {
		t.Errorf("a node kept its default name:\n%s", nodes)
	}
	// The <remap> applies, relative to the pushed namespace.
	cliPoll(t, bin, domainLaunch, func(s string) bool { return strings.Contains(s, "/robot_a/state\n") }, "topic", "list")
	cliPoll(t, bin, domainLaunch, func(s string) bool { return strings.Contains(s, "/robot_b/set_bool") }, "service", "list")

	if err := launch.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := launch.wait(t); code != 0 {
		out, errs := launch.output()
		t.Fatalf("launch exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	out, errs := launch.output()
	if !strings.Contains(out, "[cliserver-1] cliserver ready") {
		t.Errorf("screen output of peer_one missing:\n%s", out)
	}
	if strings.Contains(out, "[cliserver-2]") {
		t.Errorf("stdout of peer_two (output=log) reached the screen:\n%s", out)
	}
	for _, want := range []string{"[INFO] [cliserver-1]: process started with pid [", "[INFO] [cliserver-2]: process has finished cleanly"} {
		if !strings.Contains(errs, want) {
			t.Errorf("launch stderr lacks %q:\n%s", want, errs)
		}
	}
	entries, err := os.ReadDir(pidDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("%d peers wrote pids, want 2", len(entries))
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "pid-"))
		if err != nil {
			t.Fatal(err)
		}
		if cliAlive(pid) {
			t.Errorf("peer %d still runs after the launch ended", pid)
		}
	}
}

func TestLaunch_PrintShowsTheCommandLines(t *testing.T) {
	domainCLINoDDS := testenv.Domain(t)
	bin := cliBins(t)
	file, err := filepath.Abs("testdata/launch/peers.launch.xml")
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := cliRun(t, bin, domainCLINoDDS, "launch", file, "piddir:=/tmp/x", "--bin-dir", bin, "--print")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		bin + "/cliserver --ros-args -r __node:=peer_one -r __ns:=/robot_a --params-file '<inline parameters>' -r status:=state\n",
		"    | /robot_a/peer_one:\n    |   ros__parameters:\n    |     rate: 10\n",
		bin + "/cliserver --ros-args -r __node:=peer_two -r __ns:=/robot_b\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("launch --print lacks %q:\n%s", want, out)
		}
	}
	out, _, code = cliRun(t, bin, domainCLINoDDS, "launch", file, "--show-args", "--bin-dir", bin, "piddir:=x")
	if code != 0 || !strings.Contains(out, "    'piddir':\n        where the peers write their pids\n") {
		t.Errorf("--show-args (exit %d):\n%s", code, out)
	}
	_, errs, code = cliRun(t, bin, domainCLINoDDS, "launch", file, "--bin-dir", bin)
	if code == 0 || !strings.Contains(errs, `peers.launch.xml:4: launch argument "piddir" has no default and was not given (pass piddir:=value)`) {
		t.Errorf("missing argument: exit %d, %s", code, errs)
	}
}
