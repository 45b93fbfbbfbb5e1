package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/msgyaml"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

func serviceVerbs() map[string]verb {
	return map[string]verb{
		"service call": {
			usage: "service call SERVICE TYPE [VALUES] [-r RATE] [--timeout S]",
			help: "Call a service with a request built from YAML VALUES (e.g. '{data: true}') and print\n" +
				"the request and the response as ros2 does. Waits for the service to appear\n" +
				"(at most --timeout seconds when given).",
			run: (*App).serviceCall,
		},
		"service echo": serviceEchoVerb(),
	}
}

// serviceTypeOf resolves a service type name with a clear error.
func (a *App) serviceTypeOf(name string) (*rosidl.ServiceType, error) {
	st, err := a.Registry.Service(name)
	if err != nil || st.Request == nil || st.Request.New == nil || st.Response == nil {
		return nil, fmt.Errorf("the passed service type %q is invalid or unknown (see 'fsmnodes interface list -s')", name)
	}
	return st, nil
}

func (a *App) serviceCall(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"-r": true, "--rate": true, "--timeout": true, "--no-daemon": false})
	if err != nil {
		return err
	}
	if len(p.pos) < 2 || len(p.pos) > 3 {
		return usagef("usage: fsmnodes service call SERVICE TYPE [VALUES]")
	}
	var period time.Duration
	if p.has("-r", "--rate") {
		var err error
		if _, period, err = rateFlag(p, "1", "--rate", "-r"); err != nil {
			return err
		}
	}
	if p.has("--timeout") {
		t, err := positiveFloat(p, "1", "--timeout")
		if err != nil {
			return err
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(t*float64(time.Second)))
		defer cancel()
	}
	st, err := a.serviceTypeOf(p.pos[1])
	if err != nil {
		return err
	}
	values := "{}"
	if len(p.pos) == 3 {
		values = p.pos[2]
	}
	req, err := buildMessage(st.Request, values)
	if err != nil {
		return err
	}
	s, err := a.open(ctx, "requester")
	if err != nil {
		return err
	}
	defer s.close()
	cli, err := ros.NewDynamicClient(s.node, p.pos[0], st)
	if err != nil {
		return fmt.Errorf("client for %s: %w", p.pos[0], err)
	}
	defer cli.Close()
	if !cli.ServiceIsReady() {
		fmt.Fprintln(a.Stdout, "waiting for service to become available...")
		if err := cli.WaitForService(ctx); err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("service %s did not become available within the timeout", cli.Name())
			}
			return nilIfCanceled(err)
		}
		if err := settle(ctx); err != nil {
			return nilIfCanceled(err)
		}
	}
	for {
		fmt.Fprintf(a.Stdout, "requester: making request: %s\n\n", msgyaml.Repr(req))
		start := time.Now()
		resp, err := cli.Call(ctx, req)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("service %s did not answer within the timeout", cli.Name())
			}
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("call %s: %w", cli.Name(), err)
		}
		fmt.Fprintf(a.Stdout, "response:\n%s\n\n", msgyaml.Repr(resp))
		if period == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(start.Add(period))):
		}
	}
}

// serverSettle is how long a request waits after its service became ready
// here (settle).
const serverSettle = 200 * time.Millisecond

// settle waits serverSettle after a service became ready from our side
// only now. Discovery is not symmetric: the server may not have discovered
// our reply reader yet, and a Humble server (rmw_cyclonedds) drops a
// response whose reader it has not matched within 100 ms of the request,
// so a request sent at once can lose its answer under load. Our own
// servers wait for the reader instead (Service.respond).
func settle(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(serverSettle):
		return nil
	}
}
