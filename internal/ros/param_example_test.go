package ros_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

// A node declares its parameters at startup, validates remote changes and
// reacts to accepted ones on its callback goroutine.
func ExampleDeclareParam() {
	rc, err := ros.NewContext(ros.ContextOptions{Args: os.Args[1:]})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	node, err := rc.NewNode("robotControlMuxNode", "")
	if err != nil {
		fmt.Println(err) // e.g. a malformed --params-file, naming file, node and parameter
		return
	}
	rate, err := ros.DeclareParam(node, "update_frequency", 20.0, ros.ParamDescriptor{
		Description: "Hz", FloatRange: &param.FloatRange{From: 1, To: 100},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	idle, err := ros.DeclareDuration(node, "teleoperation_idle_timer", 500*time.Millisecond, ros.ParamDescriptor{})
	if err != nil {
		fmt.Println(err)
		return
	}
	node.OnSetParameters(func(ps []ros.Parameter) error {
		for _, p := range ps {
			if p.Name == "update_frequency" && p.Value.Double() > 50 {
				return errors.New("update_frequency above 50 Hz needs a faster bus")
			}
		}
		return nil
	})
	node.OnParametersChanged(func(ps []ros.Parameter) {
		for _, p := range ps {
			node.Logger().Infof("%s changed to %s", p.Name, p.Value)
		}
	})
	node.Logger().Infof("running at %g Hz, teleop idle timeout %v", rate, idle)
}
