package multihost

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// lossURI makes Cyclone drop permille of the packets it sends
// (Internal/Test/XmitLossiness, samples per thousand). The suite injects
// loss this way because tc's netem is not in every CI kernel (it is not in
// the one this was written on); every process of both hosts gets it, so
// each direction of the link loses that fraction.
func lossURI(permille int) string {
	return fmt.Sprintf("CYCLONEDDS_URI=<CycloneDDS><Domain><Internal><Test><XmitLossiness>%d</XmitLossiness></Test></Internal></Domain></CycloneDDS>", permille)
}

// lossRounds is how many service calls, parameter sets and action goals
// the operator makes per loss rate.
const lossRounds = 15

// opTimeout bounds one operation; a failure bound, far above the figures.
const opTimeout = 20 * time.Second

var opLine = regexp.MustCompile(`(?m)^op (\w+) (ok|fail) (.*)$`)

// TestLossyLink makes the operator call the robot's services, set its
// parameters and send it action goals over a link that loses 10 % and 30 %
// of the packets each way: every operation must complete (reliable QoS
// repairs the loss); the success rate and the latencies are logged.
func TestLossyLink(t *testing.T) {
	needNetns(t)
	for _, pct := range []int{10, 30} {
		t.Run(fmt.Sprintf("loss-%d%%", pct), func(t *testing.T) {
			t.Parallel()
			net := NewNet(t, "robot", "operator")
			robot, op := net.Host("robot"), net.Host("operator")
			domain := testenv.Domain(t)
			bin := testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
			probe := testenv.Executable(t, "test/multihost/mhprobe")
			root, err := testenv.ModuleRoot()
			if err != nil {
				t.Fatal(err)
			}
			loss := lossURI(pct * 10)
			robotEnv, opEnv := robot.Env(domain, loss), op.Env(domain, loss)
			simParams := filepath.Join(root, "params/sim.yaml")
			robot.Start(t, "robot_control_mux", robotEnv, filepath.Join(bin, "robot_control_mux"))
			robot.Start(t, "diff_drive_sim", robotEnv, filepath.Join(bin, "diff_drive_sim"), "--ros-args", "--params-file", simParams)
			robot.Start(t, "simple_navigator", robotEnv, filepath.Join(bin, "simple_navigator"), "--ros-args", "--params-file", simParams)
			calls := op.Start(t, "calls", opEnv, probe, "calls", strconv.Itoa(lossRounds), opTimeout.String())
			calls.WaitOutput(t, 120*time.Second, regexp.MustCompile(`(?m)^ready$`))
			testenv.WaitFor(t, time.Duration(3*lossRounds)*opTimeout, "the operator's operations", func() bool {
				done, _ := calls.Exited() // read before the output: all of it is in then
				if strings.Contains(calls.Output(), "\ndone\n") {
					return true // the probe exits by itself once done
				}
				if done {
					calls.MustRun(t)
				}
				return false
			})
			lat := map[string][]float64{}
			fails := map[string][]string{}
			for _, m := range opLine.FindAllStringSubmatch(calls.Output(), -1) {
				if m[2] == "fail" {
					fails[m[1]] = append(fails[m[1]], m[3])
					continue
				}
				ms, err := strconv.ParseFloat(m[3], 64)
				if err != nil {
					t.Fatalf("bad line %q", m[0])
				}
				lat[m[1]] = append(lat[m[1]], ms)
			}
			for _, kind := range []string{"service", "param", "action"} {
				ok, bad := len(lat[kind]), len(fails[kind])
				l := lat[kind]
				sort.Float64s(l)
				pc := func(p float64) float64 {
					if len(l) == 0 {
						return 0
					}
					return l[int(p*float64(len(l)-1))]
				}
				t.Logf("FIGURE %d%% loss, %s: %d/%d completed; latency median %.1f ms, 90th %.1f ms, max %.1f ms",
					pct, kind, ok, ok+bad, pc(0.5), pc(0.9), pc(1))
				if ok+bad != lossRounds {
					t.Errorf("%s: %d operations reported, want %d", kind, ok+bad, lossRounds)
				}
				if bad > 0 {
					t.Errorf("%d%% loss: %d of %d %s operations did not complete within %v: %v", pct, bad, ok+bad, kind, opTimeout, fails[kind])
				}
			}
		})
	}
}
