package rosbridge

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/foxglove"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/msgs"
)

// NodeName is the default node name, as the original bridge's.
const NodeName = "foxglove_bridge"

// AllCapabilities are the capabilities the bridge offers by default.
var AllCapabilities = []string{
	foxglove.CapClientPublish, foxglove.CapParameters, foxglove.CapParametersSubscribe,
	foxglove.CapServices, foxglove.CapConnectionGraph,
}

// Running is a started bridge: its server, the backend and where it
// listens.
type Running struct {
	Server *foxglove.Server
	Bridge *Bridge
	Addr   net.Addr
}

// NewSetup returns the setup function of the foxglove_bridge node (for
// ros.Run). static serves plain HTTP requests on the same port (the
// dashboard); nil serves 404. started, if not nil, is called once the
// server listens.
//
// Parameters (read at start, as foxglove_bridge): port (8765; 0 picks a
// free port), address ("127.0.0.1"), topic_whitelist, service_whitelist,
// param_whitelist, client_topic_whitelist (regular expressions, [".*"]),
// send_buffer_limit (10000000 bytes per client), min_qos_depth (1),
// max_qos_depth (25), include_hidden (false), capabilities (all), tls
// (false), certfile and keyfile (""); and, beyond foxglove_bridge, the
// client policy and bounds (see docs/foxglove.md). On a non-loopback
// address TLS is always on (a self-signed certificate under $ROS_HOME
// unless certfile/keyfile are given) and a token is required.
func NewSetup(static http.Handler, started func(*Running)) func(ctx context.Context, n *ros.Node) error {
	return func(ctx context.Context, n *ros.Node) error {
		d := ros.NewDeclarer(n)
		const why = "the server and its subscriptions are set up at start-up, as foxglove_bridge does"
		ro := func(desc string) param.Descriptor { return param.ReadOnly(desc, why) }
		port := param.Declare(d, "port", int64(8765), param.Descriptor{
			Description: "TCP port of the WebSocket server (0: any free port) (read-only: " + why + ")",
			ReadOnly:    true, ReadOnlyReason: why, IntegerRange: param.Ints(0, 65535)}, nil)
		address := param.Declare(d, "address", "127.0.0.1", ro("address to listen on (0.0.0.0: all interfaces)"), nil)
		all := []string{".*"}
		lists := map[string][]string{}
		for _, name := range []string{"topic_whitelist", "service_whitelist", "param_whitelist", "client_topic_whitelist"} {
			lists[name] = param.Declare(d, name, all, ro("regular expressions; only names matching one in full are offered"), nil)
		}
		positive := func(v int64) error {
			if v <= 0 {
				return errors.New("is not positive")
			}
			return nil
		}
		sendLimit := param.Declare(d, "send_buffer_limit", int64(10_000_000),
			ro("bytes of messages waiting per client before older ones are dropped (the newest of each topic stays)"), positive)
		minDepth := param.Declare(d, "min_qos_depth", int64(1), ro("minimum depth of the bridge's subscriptions"), nil)
		maxDepth := param.Declare(d, "max_qos_depth", int64(25), ro("maximum depth of the bridge's subscriptions"), nil)
		hidden := param.Declare(d, "include_hidden", false, ro("also offer hidden topics and services"), nil)
		caps := param.Declare(d, "capabilities", AllCapabilities, ro("protocol capabilities offered to clients"), nil)
		origins := param.Declare(d, "allowed_origins", foxglove.DefaultAllowedOrigins,
			ro("browser origins (scheme://host[:port]) allowed besides the bridge's own page; \"*\" allows any"), nil)
		policy := map[string][]string{}
		for _, l := range []struct {
			name string
			def  []string
		}{
			{"client_publish_denylist", foxglove.DefaultClientPublishDenylist},
			{"client_publish_allowlist", foxglove.DefaultClientPublishAllowlist},
			{"client_param_set_denylist", foxglove.DefaultClientParamSetDenylist},
			{"client_param_set_allowlist", []string{}},
		} {
			policy[l.name] = param.Declare(d, l.name, l.def, ro("regular expressions (full match); see docs/foxglove.md"), nil)
		}
		tokenFile := param.Declare(d, "token_file", "",
			ro("file holding the token WebSocket clients must give; on a non-loopback address without it, a token is generated and printed"), nil)
		useTLS := param.Declare(d, "tls", false,
			ro("serve https/wss (always on for a non-loopback address)"), nil)
		certFile := param.Declare(d, "certfile", "",
			ro("TLS certificate (PEM); without it and keyfile, a self-signed one is kept in $ROS_HOME/foxglove_bridge"), nil)
		keyFile := param.Declare(d, "keyfile", "", ro("TLS private key (PEM) of certfile"), nil)
		maxClients := param.Declare(d, "max_clients", int64(16), ro("clients connected at once; more are refused (503)"), positive)
		maxChannels := param.Declare(d, "max_client_channels", int64(64), ro("channels one client may advertise"), positive)
		maxSubs := param.Declare(d, "max_client_subscriptions", int64(256), ro("subscriptions one client may have"), positive)
		maxMsg := param.Declare(d, "max_client_message_size", int64(8<<20), ro("bytes of one message a client sends; larger closes the connection"), positive)
		if err := d.Err(); err != nil {
			return err
		}
		if minDepth < 1 || maxDepth < minDepth {
			return fmt.Errorf("parameters min_qos_depth %d and max_qos_depth %d: need 1 <= min <= max", minDepth, maxDepth)
		}
		var err error
		for _, c := range caps {
			known := false
			for _, k := range AllCapabilities {
				known = known || c == k
			}
			if !known {
				return fmt.Errorf("parameter capabilities: unknown capability %q (known: %v)", c, AllCapabilities)
			}
		}

		opts := foxglove.Options{
			Name:               NodeName,
			Capabilities:       caps,
			SupportedEncodings: []string{Encoding},
			Metadata:           map[string]string{"ROS_DISTRO": n.Context().Distro().String()},
			SendBufferLimit:    int(sendLimit),
			Static:             static,
			Logger:             n.Logger(),
			AllowedOrigins:     origins,
			MaxClients:         int(maxClients),
			MaxClientChannels:  int(maxChannels),
			MaxSubscriptions:   int(maxSubs),
			MaxMessageSize:     maxMsg,
		}
		if address != "" && address != "0.0.0.0" && address != "::" {
			opts.OwnHosts = []string{address}
		}
		generated := false
		if opts.Token, generated, err = bridgeToken(tokenFile, address); err != nil {
			return err
		}
		counters := map[string]*ros.Counter{}
		for _, name := range []string{foxglove.CountOriginRefused, foxglove.CountRequestRefused, foxglove.CountClientError} {
			counters[name] = n.Counter(name)
		}
		opts.OnCount = func(name string) {
			if c := counters[name]; c != nil {
				c.Add(1)
			}
		}
		for _, l := range []struct {
			name string
			dst  *[]*regexp.Regexp
		}{
			{"client_publish_denylist", &opts.ClientPublishDenylist},
			{"client_publish_allowlist", &opts.ClientPublishAllowlist},
			{"client_param_set_denylist", &opts.ParamSetDenylist},
			{"client_param_set_allowlist", &opts.ParamSetAllowlist},
		} {
			// An empty pattern ([""], as an empty list is written on the
			// command line) stands for no pattern.
			pats := slices.DeleteFunc(slices.Clone(policy[l.name]), func(p string) bool { return p == "" })
			if *l.dst, err = foxglove.CompileWhitelist(pats); err != nil {
				return fmt.Errorf("parameter %s: %w", l.name, err)
			}
		}
		drops := n.Counter(CounterClientDrops)
		opts.OnDrop = func(k int) { drops.Add(uint64(k)) }
		if opts.TopicWhitelist, err = foxglove.CompileWhitelist(lists["topic_whitelist"]); err != nil {
			return fmt.Errorf("parameter topic_whitelist: %w", err)
		}
		if opts.ServiceWhitelist, err = foxglove.CompileWhitelist(lists["service_whitelist"]); err != nil {
			return fmt.Errorf("parameter service_whitelist: %w", err)
		}
		if opts.ParamWhitelist, err = foxglove.CompileWhitelist(lists["param_whitelist"]); err != nil {
			return fmt.Errorf("parameter param_whitelist: %w", err)
		}
		if opts.ClientTopicWhitelist, err = foxglove.CompileWhitelist(lists["client_topic_whitelist"]); err != nil {
			return fmt.Errorf("parameter client_topic_whitelist: %w", err)
		}

		b, err := New(n, Config{Registry: msgs.Registry(), IncludeHidden: hidden,
			MinQoSDepth: int(minDepth), MaxQoSDepth: int(maxDepth)})
		if err != nil {
			return err
		}
		srv := foxglove.New(b, opts)
		// TLS: asked for, or forced by a non-loopback address, where a
		// token in clear text would be readable by anyone on the network.
		var cert tls.Certificate
		var certPath string
		created := false
		secure := useTLS || !isLoopback(address) || certFile != ""
		if secure {
			dir, err := certDir(os.Getenv)
			if err != nil {
				return err
			}
			if cert, certPath, created, err = serverCertificate(certFile, keyFile, dir, certHosts(address), time.Now()); err != nil {
				return err
			}
		}
		l, err := net.Listen("tcp", net.JoinHostPort(address, strconv.FormatInt(port, 10)))
		if err != nil {
			return fmt.Errorf("listen on %s:%d: %w", address, port, err)
		}
		ws, web := "ws", "http"
		if secure {
			l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
			ws, web = "wss", "https"
		}
		if err := b.Start(ctx, srv); err != nil {
			l.Close()
			return err
		}
		go func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, net.ErrClosed) {
				n.Logger().Errorf("WebSocket server stopped: %v", err)
			}
		}()
		go func() {
			select {
			case <-ctx.Done():
			case <-n.Context().Done():
			}
			srv.Close()
			b.Close()
		}()
		n.Logger().Infof("Foxglove WebSocket server listening on %s://%s (dashboard: %s://%s/)", ws, l.Addr(), web, l.Addr())
		if secure {
			what := "TLS certificate"
			if created {
				what = "new self-signed TLS certificate"
			}
			n.Logger().Infof("%s %s, SHA-256 fingerprint %s (compare it with what the browser shows)", what, certPath, fingerprint(cert))
		}
		switch {
		case generated:
			// To the terminal only: the log also goes to /rosout.
			host := l.Addr().String()
			if a, ok := l.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
				host = net.JoinHostPort("<this machine>", strconv.Itoa(a.Port))
			}
			fmt.Fprintf(os.Stderr, "foxglove_bridge: clients need a token (address %s is not loopback): open %s://%s/#token=%s or connect to %s://%s/?token=%s\n",
				address, web, host, opts.Token, ws, host, opts.Token)
			n.Logger().Infof("a token is required (address %s is not loopback); it is printed on standard error, not logged", address)
		case opts.Token != "":
			n.Logger().Infof("a token is required (read from %s)", tokenFile)
		}
		if started != nil {
			started(&Running{Server: srv, Bridge: b, Addr: l.Addr()})
		}
		return nil
	}
}

// bridgeToken returns the token clients must give: the contents of
// tokenFile (trimmed) when it is set, else a new random one when address
// is not a loopback address (generated true), else none.
func bridgeToken(tokenFile, address string) (token string, generated bool, err error) {
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", false, fmt.Errorf("parameter token_file: %w", err)
		}
		token = strings.TrimSpace(string(b))
		if len(token) < 16 {
			return "", false, fmt.Errorf("parameter token_file: %s holds %d characters, want at least 16", tokenFile, len(token))
		}
		return token, false, nil
	}
	if isLoopback(address) {
		return "", false, nil
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, fmt.Errorf("generating a token: %w", err)
	}
	return hex.EncodeToString(b[:]), true, nil
}

// isLoopback reports whether a listen address is on loopback only.
func isLoopback(address string) bool {
	if strings.EqualFold(address, "localhost") {
		return true
	}
	ip := net.ParseIP(address)
	return ip != nil && ip.IsLoopback()
}
