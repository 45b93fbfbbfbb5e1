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
		p, err := declareParams(ros.NewDeclarer(n))
		if err != nil {
			return err
		}
		opts, generated, err := p.options(n, static)
		if err != nil {
			return err
		}
		b, err := New(n, Config{Registry: msgs.Registry(), IncludeHidden: p.hidden,
			MinQoSDepth: int(p.minDepth), MaxQoSDepth: int(p.maxDepth)})
		if err != nil {
			return err
		}
		srv := foxglove.New(b, opts)
		bl, err := p.listen()
		if err != nil {
			return err
		}
		if err := b.Start(ctx, srv); err != nil {
			bl.Close()
			return err
		}
		go func() {
			if err := srv.Serve(bl); err != nil && !errors.Is(err, net.ErrClosed) {
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
		bl.logStart(n, p, opts.Token, generated)
		if started != nil {
			started(&Running{Server: srv, Bridge: b, Addr: bl.Addr()})
		}
		return nil
	}
}

// bridgeParams are the node's parameters, all read-only.
type bridgeParams struct {
	port                          int64
	address                       string
	lists                         map[string][]string // the four whitelists, by parameter name
	sendLimit, minDepth, maxDepth int64
	hidden                        bool
	caps, origins                 []string
	policy                        map[string][]string // the client publish and parameter-set lists, by parameter name
	tokenFile                     string
	useTLS                        bool
	certFile, keyFile             string
	maxClients, maxChannels       int64
	maxSubs, maxMsg               int64
	clientTimeout                 float64 // seconds
}

// declareParams declares the node's parameters and checks those that
// depend on each other.
func declareParams(d *param.Declarer) (bridgeParams, error) {
	const why = "the server and its subscriptions are set up at start-up, as foxglove_bridge does"
	ro := func(desc string) param.Descriptor { return param.ReadOnly(desc, why) }
	var p bridgeParams
	p.port = param.Declare(d, "port", int64(8765), param.Descriptor{
		Description: "TCP port of the WebSocket server (0: any free port) (read-only: " + why + ")",
		ReadOnly:    true, ReadOnlyReason: why, IntegerRange: param.Ints(0, 65535)}, nil)
	p.address = param.Declare(d, "address", "127.0.0.1", ro("address to listen on (0.0.0.0: all interfaces)"), nil)
	all := []string{".*"}
	p.lists = map[string][]string{}
	for _, name := range []string{"topic_whitelist", "service_whitelist", "param_whitelist", "client_topic_whitelist"} {
		p.lists[name] = param.Declare(d, name, all, ro("regular expressions; only names matching one in full are offered"), nil)
	}
	positive := func(v int64) error {
		if v <= 0 {
			return errors.New("is not positive")
		}
		return nil
	}
	p.sendLimit = param.Declare(d, "send_buffer_limit", int64(10_000_000),
		ro("bytes of messages waiting per client before older ones are dropped (the newest of each topic stays)"), positive)
	p.minDepth = param.Declare(d, "min_qos_depth", int64(1), ro("minimum depth of the bridge's subscriptions"), nil)
	p.maxDepth = param.Declare(d, "max_qos_depth", int64(25), ro("maximum depth of the bridge's subscriptions"), nil)
	p.hidden = param.Declare(d, "include_hidden", false, ro("also offer hidden topics and services"), nil)
	p.caps = param.Declare(d, "capabilities", AllCapabilities, ro("protocol capabilities offered to clients"), nil)
	p.origins = param.Declare(d, "allowed_origins", foxglove.DefaultAllowedOrigins,
		ro("browser origins (scheme://host[:port]) allowed besides the bridge's own page; \"*\" allows any"), nil)
	p.policy = map[string][]string{}
	for _, l := range []struct {
		name string
		def  []string
	}{
		{"client_publish_denylist", foxglove.DefaultClientPublishDenylist},
		{"client_publish_allowlist", foxglove.DefaultClientPublishAllowlist},
		{"client_param_set_denylist", foxglove.DefaultClientParamSetDenylist},
		{"client_param_set_allowlist", []string{}},
	} {
		p.policy[l.name] = param.Declare(d, l.name, l.def, ro("regular expressions (full match); see docs/foxglove.md"), nil)
	}
	p.tokenFile = param.Declare(d, "token_file", "",
		ro("file holding the token WebSocket clients must give; on a non-loopback address without it, a token is generated and printed"), nil)
	p.useTLS = param.Declare(d, "tls", false,
		ro("serve https/wss (always on for a non-loopback address)"), nil)
	p.certFile = param.Declare(d, "certfile", "",
		ro("TLS certificate (PEM); without it and keyfile, a self-signed one is kept in $ROS_HOME/foxglove_bridge"), nil)
	p.keyFile = param.Declare(d, "keyfile", "", ro("TLS private key (PEM) of certfile"), nil)
	p.maxClients = param.Declare(d, "max_clients", int64(16), ro("clients connected at once; more are refused (503)"), positive)
	p.maxChannels = param.Declare(d, "max_client_channels", int64(64), ro("channels one client may advertise"), positive)
	p.maxSubs = param.Declare(d, "max_client_subscriptions", int64(256), ro("subscriptions one client may have"), positive)
	p.maxMsg = param.Declare(d, "max_client_message_size", int64(8<<20), ro("bytes of one message a client sends; larger closes the connection"), positive)
	p.clientTimeout = param.Declare(d, "client_timeout", 2.0, param.Descriptor{
		Description: "seconds without hearing from a client (pinged every quarter of it, one ping at a time) after which it is lost: " +
			"the action goals it sent are canceled and what it sent meanwhile is discarded (0: clients are not supervised) (read-only: " + why + ")",
		ReadOnly: true, ReadOnlyReason: why, FloatRange: param.Floats(0, 3600)}, nil)
	if err := d.Err(); err != nil {
		return p, err
	}
	if p.minDepth < 1 || p.maxDepth < p.minDepth {
		return p, fmt.Errorf("parameters min_qos_depth %d and max_qos_depth %d: need 1 <= min <= max", p.minDepth, p.maxDepth)
	}
	for _, c := range p.caps {
		if !slices.Contains(AllCapabilities, c) {
			return p, fmt.Errorf("parameter capabilities: unknown capability %q (known: %v)", c, AllCapabilities)
		}
	}
	return p, nil
}

// options returns the server's options: limits, client policy and
// whitelists compiled, the token read or generated (generated true), and
// the refusal and drop counters of n.
func (p bridgeParams) options(n *ros.Node, static http.Handler) (opts foxglove.Options, generated bool, err error) {
	opts = foxglove.Options{
		Name:               NodeName,
		Capabilities:       p.caps,
		SupportedEncodings: []string{Encoding},
		Metadata:           map[string]string{"ROS_DISTRO": n.Context().Distro().String()},
		SendBufferLimit:    int(p.sendLimit),
		Static:             static,
		Logger:             n.Logger(),
		AllowedOrigins:     p.origins,
		MaxClients:         int(p.maxClients),
		MaxClientChannels:  int(p.maxChannels),
		MaxSubscriptions:   int(p.maxSubs),
		MaxMessageSize:     p.maxMsg,
		ClientTimeout:      time.Duration(p.clientTimeout * float64(time.Second)),
	}
	if p.address != "" && p.address != "0.0.0.0" && p.address != "::" {
		opts.OwnHosts = []string{p.address}
	}
	if opts.Token, generated, err = bridgeToken(p.tokenFile, p.address); err != nil {
		return opts, false, err
	}
	counters := map[string]*ros.Counter{}
	for _, name := range []string{foxglove.CountOriginRefused, foxglove.CountRequestRefused, foxglove.CountClientError,
		foxglove.CountClientLost, foxglove.CountStaleDiscarded} {
		counters[name] = n.Counter(name)
	}
	opts.OnCount = func(name string) {
		if c := counters[name]; c != nil {
			c.Add(1)
		}
	}
	drops := n.Counter(CounterClientDrops)
	opts.OnDrop = func(k int) { drops.Add(uint64(k)) }
	// In a client policy list an empty pattern ([""], as an empty list is
	// written on the command line) stands for no pattern.
	for _, l := range []struct {
		name   string
		pats   []string
		policy bool
		dst    *[]*regexp.Regexp
	}{
		{"client_publish_denylist", p.policy["client_publish_denylist"], true, &opts.ClientPublishDenylist},
		{"client_publish_allowlist", p.policy["client_publish_allowlist"], true, &opts.ClientPublishAllowlist},
		{"client_param_set_denylist", p.policy["client_param_set_denylist"], true, &opts.ParamSetDenylist},
		{"client_param_set_allowlist", p.policy["client_param_set_allowlist"], true, &opts.ParamSetAllowlist},
		{"topic_whitelist", p.lists["topic_whitelist"], false, &opts.TopicWhitelist},
		{"service_whitelist", p.lists["service_whitelist"], false, &opts.ServiceWhitelist},
		{"param_whitelist", p.lists["param_whitelist"], false, &opts.ParamWhitelist},
		{"client_topic_whitelist", p.lists["client_topic_whitelist"], false, &opts.ClientTopicWhitelist},
	} {
		pats := l.pats
		if l.policy {
			pats = slices.DeleteFunc(slices.Clone(pats), func(pat string) bool { return pat == "" })
		}
		if *l.dst, err = foxglove.CompileWhitelist(pats); err != nil {
			return opts, false, fmt.Errorf("parameter %s: %w", l.name, err)
		}
	}
	return opts, generated, nil
}

// bridgeListener is where the server listens, and the certificate it
// serves when secure.
type bridgeListener struct {
	net.Listener
	secure   bool
	cert     tls.Certificate
	certPath string
	created  bool // the certificate is a new self-signed one
}

// listen opens the server's port. TLS is on when asked for, when a
// certificate is given, or when the address is not loopback, where a
// token in clear text would be readable by anyone on the network.
func (p bridgeParams) listen() (*bridgeListener, error) {
	bl := &bridgeListener{secure: p.useTLS || !isLoopback(p.address) || p.certFile != ""}
	if bl.secure {
		dir, err := certDir(os.Getenv)
		if err != nil {
			return nil, err
		}
		if bl.cert, bl.certPath, bl.created, err = serverCertificate(p.certFile, p.keyFile, dir, certHosts(p.address), time.Now()); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(p.address, strconv.FormatInt(p.port, 10)))
	if err != nil {
		return nil, fmt.Errorf("listen on %s:%d: %w", p.address, p.port, err)
	}
	if bl.secure {
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{bl.cert}, MinVersion: tls.VersionTLS12})
	}
	bl.Listener = l
	return bl, nil
}

// schemes returns the URL schemes of the WebSocket and of the page.
func (bl *bridgeListener) schemes() (ws, web string) {
	if bl.secure {
		return "wss", "https"
	}
	return "ws", "http"
}

// logStart logs where the server listens, its certificate and whether a
// token is required. A generated token goes to the terminal only: the
// log also goes to /rosout.
func (bl *bridgeListener) logStart(n *ros.Node, p bridgeParams, token string, generated bool) {
	ws, web := bl.schemes()
	n.Logger().Infof("Foxglove WebSocket server listening on %s://%s (dashboard: %s://%s/)", ws, bl.Addr(), web, bl.Addr())
	if bl.secure {
		what := "TLS certificate"
		if bl.created {
			what = "new self-signed TLS certificate"
		}
		n.Logger().Infof("%s %s, SHA-256 fingerprint %s (compare it with what the browser shows)", what, bl.certPath, fingerprint(bl.cert))
	}
	switch {
	case generated:
		host := bl.Addr().String()
		if a, ok := bl.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
			host = net.JoinHostPort("<this machine>", strconv.Itoa(a.Port))
		}
		fmt.Fprintf(os.Stderr, "foxglove_bridge: clients need a token (address %s is not loopback): open %s://%s/#token=%s or connect to %s://%s/?token=%s\n",
			p.address, web, host, token, ws, host, token)
		n.Logger().Infof("a token is required (address %s is not loopback); it is printed on standard error, not logged", p.address)
	case token != "":
		n.Logger().Infof("a token is required (read from %s)", p.tokenFile)
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
