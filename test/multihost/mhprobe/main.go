// Command mhprobe is the observer and the operator's scripted hand in the
// test/multihost tests. It runs in a host's network namespace and prints
// one line per event, with the wall-clock time in Unix nanoseconds, so the
// test can measure across processes:
//
//	mhprobe twist TOPIC     node "mh_twist": "twist <ns> <linear.x> <angular.z>" per
//	                        geometry_msgs/Twist on TOPIC (reliable, keep last 100)
//	mhprobe odom TOPIC      node "mh_odom": "odom <ns> <twist.linear.x> <twist.angular.z>"
//	                        per nav_msgs/Odometry on TOPIC
//	mhprobe pose TOPIC      node "mh_pose": "pose <ns> <pose.position.x> <pose.position.y>" per
//	                        nav_msgs/Odometry on TOPIC
//	mhprobe scan TOPIC      node "mh_scan": "scan <ns> <ranges> 0" per sensor_msgs/LaserScan
//	                        on TOPIC (sensor data QoS, as a viewer subscribes)
//	mhprobe joint TOPIC NAME
//	                        node "mh_joint": "joint <ns> <position of NAME> 0" per
//	                        sensor_msgs/JointState on TOPIC that names the joint
//	mhprobe velma TOPIC     node "mh_velma": "velma <ns> <iteration> <overruns> <p50> <p99> <max>" per
//	                        velma_msgs/Status on TOPIC (the 500 Hz loop's iterations, its
//	                        missed deadlines and its period over the last 10 s, in s)
//	mhprobe mode TOPIC      node "mh_mode": "mode <ns> <mode> <emergency_stop 0|1>" per
//	                        rsm_msgs/OperationMode on TOPIC
//	mhprobe waypoints TOPIC node "mh_waypoints": "waypoints <ns> <count> <visited>" per
//	                        rsm_msgs/WaypointArray on TOPIC (published on every change)
//	mhprobe state TOPIC     node "mh_state": "state <ns> <data>" per std_msgs/String on TOPIC
//	mhprobe diag NAME       node "mh_diag": "diag <ns> <key>=<value>;..." per status named
//	                        NAME on /diagnostics (spaces in keys and values become _)
//	mhprobe calls N TIMEOUT node "mh_calls": waits for the robot's rsm/setOperationMode
//	                        service, robotControlMuxNode's set_parameters and the
//	                        navigate_to_pose action, then N rounds of a service call
//	                        (operation mode STOPPED), a parameter set
//	                        (teleoperation_idle_timer) and an action goal (sent,
//	                        canceled, its result fetched), each bounded by TIMEOUT (a Go
//	                        duration); prints "op <kind> ok <ms>" or "op <kind> fail <why>"
//	                        per operation and exits
//	mhprobe fakespdp VENDOR DOMAIN
//	                        no ROS: sends a hand-made RTPS participant announcement with
//	                        vendor id VENDOR (hex, e.g. 010f for Fast DDS) and USER_DATA
//	                        "enclave=/;" to the discovery group of DOMAIN every second,
//	                        standing in for another DDS vendor's ROS 2 process
//
// Further arguments (--ros-args ...) go to the ROS context; the domain and
// discovery come from the environment.
package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mhprobe:", err)
		os.Exit(1)
	}
}

func usage() error {
	return errors.New("usage: mhprobe twist TOPIC | odom TOPIC | pose TOPIC | scan TOPIC | joint TOPIC NAME | velma TOPIC | mode TOPIC | waypoints TOPIC | state TOPIC | diag NAME | calls N TIMEOUT [--ros-args ...] | fakespdp VENDOR DOMAIN")
}

func run(args []string) error {
	if len(args) < 2 {
		return usage()
	}
	mode, rest := args[0], args[1:]
	ctx := context.Background()
	switch mode {
	case "twist":
		return ros.Run(ctx, rest[1:], "mh_twist", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSDefault.KeepLast(100), func(m *geometry_msgs_msg.Twist) {
				fmt.Printf("twist %d %g %g\n", time.Now().UnixNano(), m.Linear.X, m.Angular.Z)
			})
			return err
		})
	case "odom":
		return ros.Run(ctx, rest[1:], "mh_odom", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSDefault.KeepLast(100), func(m *nav_msgs_msg.Odometry) {
				fmt.Printf("odom %d %g %g\n", time.Now().UnixNano(), m.Twist.Twist.Linear.X, m.Twist.Twist.Angular.Z)
			})
			return err
		})
	case "pose":
		return ros.Run(ctx, rest[1:], "mh_pose", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSDefault.KeepLast(100), func(m *nav_msgs_msg.Odometry) {
				fmt.Printf("pose %d %g %g\n", time.Now().UnixNano(), m.Pose.Pose.Position.X, m.Pose.Pose.Position.Y)
			})
			return err
		})
	case "scan":
		return ros.Run(ctx, rest[1:], "mh_scan", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSSensorData, func(m *sensor_msgs_msg.LaserScan) {
				fmt.Printf("scan %d %d 0\n", time.Now().UnixNano(), len(m.Ranges))
			})
			return err
		})
	case "joint":
		if len(rest) < 2 {
			return usage()
		}
		name := rest[1]
		return ros.Run(ctx, rest[2:], "mh_joint", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSDefault.KeepLast(100), func(m *sensor_msgs_msg.JointState) {
				for i, j := range m.Name {
					if j == name && i < len(m.Position) {
						fmt.Printf("joint %d %g 0\n", time.Now().UnixNano(), m.Position[i])
					}
				}
			})
			return err
		})
	case "velma":
		return ros.Run(ctx, rest[1:], "mh_velma", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSDefault.KeepLast(100), func(m *velma_msgs_msg.Status) {
				fmt.Printf("velma %d %d %d %g %g %g\n", time.Now().UnixNano(), m.Iteration, m.Overruns,
					m.LoopPeriodP50, m.LoopPeriodP99, m.LoopPeriodMax)
			})
			return err
		})
	case "mode":
		return ros.Run(ctx, rest[1:], "mh_mode", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSDefault.KeepLast(100), func(m *rsm_msgs_msg.OperationMode) {
				estop := 0
				if m.EmergencyStop {
					estop = 1
				}
				fmt.Printf("mode %d %d %d\n", time.Now().UnixNano(), m.Mode, estop)
			})
			return err
		})
	case "waypoints":
		return ros.Run(ctx, rest[1:], "mh_waypoints", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSDefault.KeepLast(10), func(m *rsm_msgs_msg.WaypointArray) {
				visited := 0
				for _, w := range m.Waypoints {
					if w.Visited {
						visited++
					}
				}
				fmt.Printf("waypoints %d %d %d\n", time.Now().UnixNano(), len(m.Waypoints), visited)
			})
			return err
		})
	case "state":
		return ros.Run(ctx, rest[1:], "mh_state", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, rest[0], ros.QoSDefault.KeepLast(100), func(m *std_msgs_msg.String) {
				fmt.Printf("state %d %s\n", time.Now().UnixNano(), m.Data)
			})
			return err
		})
	case "diag":
		return ros.Run(ctx, rest[1:], "mh_diag", func(_ context.Context, n *ros.Node) error {
			_, err := ros.NewSubscription(n, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
				for _, st := range m.Status {
					if st.Name != rest[0] {
						continue
					}
					var kv []string
					for _, v := range st.Values {
						kv = append(kv, strings.ReplaceAll(v.Key, " ", "_")+"="+strings.ReplaceAll(v.Value, " ", "_"))
					}
					fmt.Printf("diag %d %s\n", time.Now().UnixNano(), strings.Join(kv, ";"))
				}
			})
			return err
		})
	case "fakespdp":
		if len(rest) < 2 {
			return usage()
		}
		return fakeSPDP(rest[0], rest[1])
	case "calls":
		if len(rest) < 2 {
			return usage()
		}
		count, err := strconv.Atoi(rest[0])
		if err != nil || count < 1 {
			return fmt.Errorf("calls: N %q is not a positive number", rest[0])
		}
		timeout, err := time.ParseDuration(rest[1])
		if err != nil {
			return fmt.Errorf("calls: TIMEOUT: %w", err)
		}
		return ros.Run(ctx, rest[2:], "mh_calls", func(_ context.Context, n *ros.Node) error {
			return setupCalls(n, count, timeout)
		})
	}
	return usage()
}

// setupCalls creates the clients and runs the rounds on a loop of the
// context, which shuts the node down when done.
func setupCalls(n *ros.Node, count int, timeout time.Duration) error {
	setMode, err := ros.NewClient(n, "/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode)
	if err != nil {
		return err
	}
	setParams, err := ros.NewClient(n, "/robotControlMuxNode/set_parameters", rcl_interfaces_srv.SetParameters)
	if err != nil {
		return err
	}
	nav, err := ros.NewActionClient(n, "/navigate_to_pose", nav2_msgs_action.NavigateToPose)
	if err != nil {
		return err
	}
	rc := n.Context()
	rc.Go(func(ctx context.Context) error {
		defer rc.Shutdown()
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := setMode.WaitForService(wctx); err != nil {
			return fmt.Errorf("wait for rsm/setOperationMode: %w", err)
		}
		if err := setParams.WaitForService(wctx); err != nil {
			return fmt.Errorf("wait for set_parameters: %w", err)
		}
		if err := nav.WaitForServer(wctx); err != nil {
			return fmt.Errorf("wait for navigate_to_pose: %w", err)
		}
		fmt.Println("ready")
		op := func(kind string, f func(ctx context.Context) error) {
			octx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			if err := f(octx); err != nil {
				fmt.Printf("op %s fail %v\n", kind, err)
				return
			}
			fmt.Printf("op %s ok %.1f\n", kind, float64(time.Since(start).Microseconds())/1000)
		}
		for i := 0; i < count && ctx.Err() == nil; i++ {
			op("service", func(ctx context.Context) error {
				r, err := setMode.Call(ctx, &rsm_msgs_srv.SetOperationMode_Request{
					OperationMode: rsm_msgs_msg.OperationMode{Mode: rsm_msgs_msg.OperationMode_STOPPED}})
				if err == nil && !r.Success {
					err = fmt.Errorf("answered success=false: %s", r.Message)
				}
				return err
			})
			op("param", func(ctx context.Context) error {
				v := 0.5 + 0.1*float64(i%2)
				r, err := setParams.Call(ctx, &rcl_interfaces_srv.SetParameters_Request{Parameters: []rcl_interfaces_msg.Parameter{{
					Name:  "teleoperation_idle_timer",
					Value: rcl_interfaces_msg.ParameterValue{Type: rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE, DoubleValue: v}}}})
				if err == nil && (len(r.Results) != 1 || !r.Results[0].Successful) {
					err = fmt.Errorf("refused: %+v", r.Results)
				}
				return err
			})
			op("action", func(ctx context.Context) error {
				g, err := nav.SendGoal(ctx, &nav2_msgs_action.NavigateToPose_Goal{Pose: geometry_msgs_msg.PoseStamped{
					Pose: geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: 0.5}, Orientation: geometry_msgs_msg.Quaternion{W: 1}}}}, nil)
				if err != nil {
					return err
				}
				if err := g.Cancel(ctx); err != nil && !errors.Is(err, ros.ErrGoalTerminated) {
					return fmt.Errorf("cancel: %w", err)
				}
				_, st, err := g.Result(ctx)
				if err == nil && !st.Terminal() {
					err = fmt.Errorf("result with status %v", st)
				}
				return err
			})
		}
		fmt.Println("done")
		return nil
	})
	return nil
}

// fakeSPDP sends an SPDP announcement of a participant of another vendor
// every second until killed.
func fakeSPDP(vendorHex, domainStr string) error {
	vendor, err := hex.DecodeString(vendorHex)
	if err != nil || len(vendor) != 2 {
		return fmt.Errorf("fakespdp: vendor %q is not 4 hex digits", vendorHex)
	}
	domain, err := strconv.Atoi(domainStr)
	if err != nil || domain < 0 || domain > 232 {
		return fmt.Errorf("fakespdp: domain %q", domainStr)
	}
	var prefix [12]byte
	copy(prefix[:], vendor)
	if _, err := rand.Read(prefix[2:]); err != nil {
		return err
	}
	msg := spdpMessage([2]byte(vendor), prefix, uint32(domain), "enclave=/;")
	// Sent from the host's own address: with no default route, that is what
	// picks the interface of a multicast send.
	var local *net.UDPAddr
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			local = &net.UDPAddr{IP: n.IP}
			break
		}
	}
	conn, err := net.DialUDP("udp4", local, &net.UDPAddr{IP: net.IPv4(239, 255, 0, 1), Port: 7400 + 250*domain})
	if err != nil {
		return err
	}
	defer conn.Close()
	fmt.Println("sending")
	for {
		if _, err := conn.Write(msg); err != nil {
			return err
		}
		time.Sleep(time.Second)
	}
}

// spdpMessage builds an RTPS message with one SPDP DATA submessage
// (little-endian, parameter list payload): participant GUID, domain id,
// protocol version, vendor id and USER_DATA.
func spdpMessage(vendor [2]byte, prefix [12]byte, domain uint32, userData string) []byte {
	le := binary.LittleEndian
	var pl []byte
	param := func(pid uint16, v []byte) {
		for len(v)%4 != 0 {
			v = append(v, 0)
		}
		pl = le.AppendUint16(pl, pid)
		pl = le.AppendUint16(pl, uint16(len(v)))
		pl = append(pl, v...)
	}
	guid := append(append([]byte{}, prefix[:]...), 0, 0, 1, 0xc1)
	param(0x0050, guid)                               // PID_PARTICIPANT_GUID
	param(0x000f, le.AppendUint32(nil, domain))       // PID_DOMAIN_ID
	param(0x0015, []byte{2, 1})                       // PID_PROTOCOL_VERSION
	param(0x0016, vendor[:])                          // PID_VENDORID
	param(0x0002, le.AppendUint32(nil, 20))           // PID_PARTICIPANT_LEASE_DURATION (seconds)
	ud := le.AppendUint32(nil, uint32(len(userData))) // PID_USER_DATA: sequence<octet>
	param(0x002c, append(ud, userData...))
	pl = le.AppendUint16(pl, 0x0001) // PID_SENTINEL
	pl = le.AppendUint16(pl, 0)

	var data []byte
	data = append(data, 0, 0)                   // extraFlags
	data = le.AppendUint16(data, 16)            // octetsToInlineQos
	data = append(data, 0x00, 0x01, 0x00, 0xc7) // readerId: SPDP reader
	data = append(data, 0x00, 0x01, 0x00, 0xc2) // writerId: SPDP writer
	data = le.AppendUint32(data, 0)             // writerSN high
	data = le.AppendUint32(data, 1)             // writerSN low
	data = append(data, 0x00, 0x03, 0x00, 0x00) // PL_CDR_LE
	data = append(data, pl...)

	msg := []byte("RTPS")
	msg = append(msg, 2, 1)
	msg = append(msg, vendor[:]...)
	msg = append(msg, prefix[:]...)
	msg = append(msg, 0x15, 0x05) // DATA, little-endian, data present
	msg = le.AppendUint16(msg, uint16(len(data)))
	return append(msg, data...)
}
