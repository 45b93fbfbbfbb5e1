package rostest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// recorder is a testing.TB that records a fatal failure instead of ending
// the test, so that Call's failure path can be checked.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatal(...any)          { r.failed = true; panic(r) }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }

// Call waits for a service that appears after it started waiting, returns
// the server's answer, and fails the test when the service never comes.
func TestCall(t *testing.T) {
	domain := testenv.Domain(t)
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() { _ = rc.Spin(ctx) }()
	client, err := rc.NewNode("rostest_client", "")
	if err != nil {
		t.Fatal(err)
	}
	server, err := rc.NewNode("rostest_server", "")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond) // the client is waiting by then, or finds it at once: both are fine
		_, err := ros.NewService(server, "/rostest/set", std_srvs_srv.SetBool,
			func(_ context.Context, r *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
				return &std_srvs_srv.SetBool_Response{Success: r.Data, Message: "set"}, nil
			})
		if err != nil {
			t.Error(err)
		}
	}()
	resp := Call(t, ctx, client, "/rostest/set", std_srvs_srv.SetBool, &std_srvs_srv.SetBool_Request{Data: true})
	if !resp.Success || resp.Message != "set" {
		t.Errorf("response %+v, want success and message \"set\"", resp)
	}

	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != any(r) {
				panic(p)
			}
		}()
		Call(r, short, client, "/rostest/absent", std_srvs_srv.Trigger, &std_srvs_srv.Trigger_Request{})
	}()
	if !r.failed {
		t.Error("Call of a service that never appears did not fail the test")
	}
}
