package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDomain_Unique reserves many domains in one test and checks that no id
// is handed out twice while held, and that a released id can be had again.
func TestDomain_Unique(t *testing.T) {
	seen := map[uint32]bool{}
	var releases []func()
	for i := 0; i < 20; i++ {
		id, release, err := ReserveDomain()
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("domain %d handed out twice", id)
		}
		if id == 0 || id > 232 || (id >= 150 && id < 200) {
			t.Fatalf("domain %d outside the test ranges", id)
		}
		seen[id] = true
		releases = append(releases, release)
	}
	for _, r := range releases {
		r()
	}
}

// TestDomain_OtherProcess checks that a domain held here cannot be taken by
// another process, and can once it is released: the child (this test binary
// again) tries the lock of one id and prints 1 when it got it.
func TestDomain_OtherProcess(t *testing.T) {
	if s := os.Getenv("TESTENV_CHILD_DOMAIN"); s != "" {
		id, _ := strconv.Atoi(s)
		release, err := tryReserve(lockDir(), uint32(id))
		if err != nil {
			os.Exit(2)
		}
		if release != nil {
			os.Stdout.WriteString("1")
		} else {
			os.Stdout.WriteString("0")
		}
		os.Exit(0)
	}
	child := func(id uint32) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDomain_OtherProcess$")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD_DOMAIN="+strconv.Itoa(int(id)))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		return string(out)
	}
	id, release, err := ReserveDomain()
	if err != nil {
		t.Fatal(err)
	}
	if got := child(id); got != "0" {
		t.Fatalf("another process took domain %d while this one held it (child printed %q)", id, got)
	}
	release()
	if got := child(id); got != "1" {
		t.Fatalf("domain %d still locked after release (child printed %q)", id, got)
	}
}

// TestExecutable builds a main package of the module once and finds it
// again in the same directory.
func TestExecutable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an executable")
	}
	t.Setenv(BinEnv, "")
	p := Executable(t, "nodes/joy")
	if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s: not an executable (%v)", p, err)
	}
	if dir := ExecutableDir(t, "nodes/joy"); dir != filepath.Dir(p) {
		t.Fatalf("ExecutableDir = %s, want %s", dir, filepath.Dir(p))
	}
	t.Setenv(BinEnv, filepath.Dir(p))
	if q := Executable(t, "nodes/joy"); q != p {
		t.Fatalf("prebuilt lookup gave %s, want %s", q, p)
	}
}

// TestExecutableDir_BuildsTogether: the packages ExecutableDir has not
// built yet are built by one go build into one directory, each runnable;
// with one that does not build, the error names it.
func TestExecutableDir_BuildsTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("builds executables")
	}
	t.Setenv(BinEnv, "")
	dir := ExecutableDir(t, "nodes/joy_teleop", "nodes/cmd_vel_reverse")
	for _, name := range []string{"joy_teleop", "cmd_vel_reverse"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s in %s: not an executable (%v)", name, dir, err)
		}
	}
	if _, err := executable("internal/testenv/testdata/nosuchpkg", false); err == nil || !strings.Contains(err.Error(), "nosuchpkg") {
		t.Errorf("a package that does not exist: %v, want an error naming it", err)
	}
	buildAll([]string{"nodes/joy_teleop", "internal/testenv/testdata/nosuchpkg2", "nodes/cmd_vel_reverse"})
	if _, err := executable("internal/testenv/testdata/nosuchpkg2", false); err == nil || !strings.Contains(err.Error(), "nosuchpkg2") {
		t.Errorf("a package that does not exist, built with others: %v, want an error naming it", err)
	}
}
