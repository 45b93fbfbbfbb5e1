// Package multihost runs the robot and the operator station on separate
// hosts: Linux network namespaces joined by a switch (a bridge in a
// namespace of its own), each with its own loopback and one Ethernet-like
// link (a veth pair whose other end is a port of the switch).
//
// The network exists only inside the namespaces a test creates: the
// addresses (10.231.0.0/24) are set on links made inside them, there is no
// default route, no link into the root namespace and no NAT, and the root
// namespace is never changed. Every namespace of a test is named
// fsmmh-<pid>-<n>-<host>, so parallel runs do not collide; the test removes
// its namespaces (and so their links) and its processes when it ends, also
// on failure or panic, and each run first sweeps the namespaces left by
// runs whose process is gone.
//
// It needs root and the ip(8) tool; without them (a developer's machine)
// every test is skipped with a message on stderr. CI runs as root.
package multihost

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func TestMain(m *testing.M) {
	// The tests wait on processes and on the network, not on the CPU.
	testenv.DefaultParallel(4)
	sweepStale()
	code := testenv.Main(m)
	sweepOwn()
	os.Exit(code)
}

// nsPrefix starts the name of every namespace this package creates.
const nsPrefix = "fsmmh-"

// subnet is the private range used inside the namespaces (a /24).
const subnet = "10.231.0."

// netSeq numbers the networks of one test process.
var netSeq atomic.Int64

// whyNot is the reason the suite cannot run here ("" when it can).
var whyNot = sync.OnceValue(func() string {
	if os.Geteuid() != 0 {
		return "test/multihost needs root (network namespaces); CI runs it as root"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "test/multihost needs ip(8) (iproute2) for network namespaces"
	}
	// Probe: a namespace of our own, removed at once.
	name := fmt.Sprintf("%s%d-probe", nsPrefix, os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Sprintf("test/multihost cannot create a network namespace (ip netns add: %v: %s)", err, bytes.TrimSpace(out))
	}
	_ = exec.Command("ip", "netns", "del", name).Run()
	return ""
})

// needNetns skips t, loudly (on stderr, so it shows without -v), where
// network namespaces cannot be made.
func needNetns(t *testing.T) {
	t.Helper()
	if why := whyNot(); why != "" {
		fmt.Fprintf(os.Stderr, "SKIP %s: %s\n", t.Name(), why)
		t.Skip(why)
	}
}

// Net is one test's network: a switch namespace with a bridge, and hosts.
type Net struct {
	t      *testing.T
	prefix string // fsmmh-<pid>-<n>-
	sw     string // the switch's namespace
	hosts  map[string]*Host
	order  []string
}

// Host is a machine of the test network: a namespace with lo and eth0.
type Host struct {
	Name string
	// NS is the namespace's name.
	NS string
	// Addr is eth0's address (10.231.0.x).
	Addr string
	// port is the switch's end of the host's link (in the switch namespace).
	port string
	net  *Net
}

// NewNet builds a network of the named hosts (addresses 10.231.0.1,
// .2, ... in order) joined by one switch, with multicast working, and
// removes it when t ends.
func NewNet(t *testing.T, hosts ...string) *Net {
	t.Helper()
	needNetns(t)
	n := &Net{t: t, prefix: fmt.Sprintf("%s%d-%d-", nsPrefix, os.Getpid(), netSeq.Add(1)), hosts: map[string]*Host{}}
	n.sw = n.prefix + "switch"
	t.Cleanup(n.remove) // registered first: runs last, after the processes stopped
	n.ip("netns", "add", n.sw)
	n.ipIn(n.sw, "link", "set", "lo", "up")
	// A bridge without multicast snooping floods multicast to every port, as
	// a plain switch or a Wi-Fi access point that passes multicast does.
	n.ipIn(n.sw, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
	n.ipIn(n.sw, "link", "set", "br0", "up")
	for i, name := range hosts {
		h := &Host{Name: name, NS: n.prefix + name, Addr: subnet + strconv.Itoa(i+1), port: "p" + strconv.Itoa(i+1), net: n}
		n.ip("netns", "add", h.NS)
		n.ipIn(h.NS, "link", "set", "lo", "up")
		// The veth is made inside the host's namespace with its peer
		// straight in the switch's: no link ever exists in the root
		// namespace.
		n.ipIn(h.NS, "link", "add", "eth0", "type", "veth", "peer", "name", h.port, "netns", n.sw)
		n.ipIn(h.NS, "addr", "add", h.Addr+"/24", "dev", "eth0")
		n.ipIn(h.NS, "link", "set", "eth0", "up")
		n.ipIn(n.sw, "link", "set", h.port, "master", "br0")
		n.ipIn(n.sw, "link", "set", h.port, "up")
		n.hosts[name] = h
		n.order = append(n.order, name)
	}
	return n
}

// Host returns the named host.
func (n *Net) Host(name string) *Host {
	h, ok := n.hosts[name]
	if !ok {
		n.t.Fatalf("no host %q in the test network", name)
	}
	return h
}

// BlockMulticast makes the switch drop multicast (and broadcast) between
// its ports, as many Wi-Fi networks do: the hosts' interfaces still say
// MULTICAST, but nothing sent to a group arrives anywhere else.
func (n *Net) BlockMulticast() {
	for _, name := range n.order {
		h := n.hosts[name]
		n.run("bridge", "-n", n.sw, "link", "set", "dev", h.port, "mcast_flood", "off")
	}
}

// LinkDown takes the host's link down at the switch (its cable pulled, its
// Wi-Fi gone): nothing passes between it and the others until LinkUp. The
// host's own eth0 keeps its address.
func (h *Host) LinkDown() { h.net.ipIn(h.net.sw, "link", "set", h.port, "down") }

// LinkUp brings the host's link back.
func (h *Host) LinkUp() { h.net.ipIn(h.net.sw, "link", "set", h.port, "up") }

// Shape limits what the switch sends to the host, and what the host sends,
// to rate (tc token bucket, e.g. "1mbit"), as a slow radio link does.
func (h *Host) Shape(rate string) {
	args := []string{"qdisc", "replace", "dev", "", "root", "tbf", "rate", rate, "burst", "16kbit", "latency", "200ms"}
	args[3] = h.port
	h.net.run("tc", append([]string{"-n", h.net.sw}, args...)...)
	args[3] = "eth0"
	h.net.run("tc", append([]string{"-n", h.NS}, args...)...)
}

// Unshape removes Shape's limits: the link is free again.
func (h *Host) Unshape() {
	h.net.run("tc", "-n", h.net.sw, "qdisc", "del", "dev", h.port, "root")
	h.net.run("tc", "-n", h.NS, "qdisc", "del", "dev", "eth0", "root")
}

// ShapeStats returns the counters of the switch's token bucket toward the
// host (sent, dropped, overlimits), to show that Shape's limit was hit.
func (h *Host) ShapeStats() string {
	out, err := exec.Command("tc", "-n", h.net.sw, "-s", "qdisc", "show", "dev", h.port).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("tc -s qdisc show: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "Sent ") {
			return l
		}
	}
	return strings.TrimSpace(string(out))
}

// Env is the environment of a process on the host: this process's, without
// any ROS or Cyclone variable (testenv.Main's LOCALHOST range included:
// hosts talk over their link), plus ROS_DOMAIN_ID and vars ("K=V").
func (h *Host) Env(domain uint32, vars ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "ROS_LOG_DIR" || k == "ROS_HOME" || !(strings.HasPrefix(k, "ROS_") || strings.HasPrefix(k, "CYCLONEDDS") || k == "RMW_IMPLEMENTATION") {
			env = append(env, kv)
		}
	}
	env = append(env, fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	return append(env, vars...)
}

// Start runs path with args on the host, as testenv.Start does: output in
// a log, SIGINT when the test ends. The process enters the host's network
// namespace and a UTS namespace of its own whose host name is the host's
// (so Cyclone DDS announces it), through ip netns exec, unshare and sh,
// each of which executes the next in place: the process is path itself.
func (h *Host) Start(t *testing.T, name string, env []string, path string, args ...string) *testenv.Process {
	t.Helper()
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Start(t, h.Name+"-"+name, env, ip, h.argv(path, args...)...)
}

// Command returns a command that runs path with args on the host, as
// Start does.
func (h *Host) Command(env []string, path string, args ...string) *exec.Cmd {
	c := exec.Command("ip", h.argv(path, args...)...)
	c.Env = env
	return c
}

func (h *Host) argv(path string, args ...string) []string {
	return append([]string{"netns", "exec", h.NS, "unshare", "--uts", "/bin/sh", "-c", `hostname "$0" && exec "$@"`, h.Name, path}, args...)
}

func (n *Net) ip(args ...string) { n.run("ip", args...) }

func (n *Net) ipIn(ns string, args ...string) { n.run("ip", append([]string{"-n", ns}, args...)...) }

func (n *Net) run(name string, args ...string) {
	n.t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		n.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

// remove deletes the network's namespaces, after killing whatever still
// runs in them (the processes of the test have been stopped by then; what
// is left is a leak, reported).
func (n *Net) remove() {
	for _, ns := range append(n.nsNames(), n.sw) {
		if pids := nsPids(ns); len(pids) > 0 {
			n.t.Errorf("processes %v still ran in namespace %s at the end of the test; killed", describePids(pids), ns)
			killAll(pids)
		}
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil && !strings.Contains(string(out), "No such file") {
			n.t.Errorf("ip netns del %s: %v: %s", ns, err, bytes.TrimSpace(out))
		}
	}
}

func (n *Net) nsNames() []string {
	var names []string
	for _, name := range n.order {
		names = append(names, n.hosts[name].NS)
	}
	return names
}

// nsPids lists the processes in namespace ns.
func nsPids(ns string) []int {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

// describePids names each process for a report: its pid, parent and
// command line.
func describePids(pids []int) []string {
	var out []string
	for _, p := range pids {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		ppid := "?"
		// stat: pid (comm) state ppid ...; comm may hold spaces.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
				ppid = f[1]
			}
		}
		out = append(out, fmt.Sprintf("%d (parent %s): %q", p, ppid, strings.TrimRight(strings.ReplaceAll(string(cmd), "\x00", " "), " ")))
	}
	return out
}

func killAll(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	time.Sleep(100 * time.Millisecond)
}

// ourNamespaces lists the namespaces named by this package (fsmmh-<pid>-...)
// with the pid of the run that made each.
func ourNamespaces() map[string]int {
	m := map[string]int{}
	dir, err := os.ReadDir("/run/netns")
	if err != nil {
		return m
	}
	for _, e := range dir {
		rest, ok := strings.CutPrefix(e.Name(), nsPrefix)
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		if pid, err := strconv.Atoi(pidStr); err == nil {
			m[e.Name()] = pid
		}
	}
	return m
}

// sweepStale removes the namespaces of runs whose process is gone (a test
// binary killed before its cleanups ran), with whatever runs in them.
func sweepStale() {
	if whyNot() != "" {
		return
	}
	for ns, pid := range ourNamespaces() {
		if pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		fmt.Fprintf(os.Stderr, "multihost: removing namespace %s left by a run that died (pid %d)\n", ns, pid)
		killAll(nsPids(ns))
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
}

// sweepOwn removes any namespace of this run still there after the tests
// (none when every cleanup ran).
func sweepOwn() {
	for ns, pid := range ourNamespaces() {
		if pid == os.Getpid() {
			fmt.Fprintf(os.Stderr, "multihost: namespace %s outlived its test; removed\n", ns)
			killAll(nsPids(ns))
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
	}
}
