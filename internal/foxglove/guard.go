package foxglove

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Counters of what the server refused or answered with an error; each
// Options.OnCount call names one of them.
const (
	// CountOriginRefused counts WebSocket handshakes refused: 403 for
	// their Origin, 401 for a missing or wrong token, 429 after too many
	// failed attempts.
	CountOriginRefused = "client_connections_refused"
	// CountRequestRefused counts client requests refused by policy: a
	// publication on a denied topic, a denied parameter set, channels or
	// subscriptions beyond the per-client bounds, a message larger than
	// MaxMessageSize.
	CountRequestRefused = "client_requests_refused"
	// CountClientError counts client messages answered with a warning or
	// error status (malformed messages, unknown ids, failed requests).
	CountClientError = "client_errors"
)

// DefaultAllowedOrigins are the browser origins allowed besides the
// page's own: the Foxglove web app.
var DefaultAllowedOrigins = []string{"https://app.foxglove.dev"}

// DefaultClientPublishDenylist: a client may not publish on a topic whose
// last name token is cmd_vel (a robot's velocity output, the one the mux
// writes, past the mux and its e-stop)...
var DefaultClientPublishDenylist = []string{"(.*/)?cmd_vel"}

// DefaultClientPublishAllowlist ...except on the velocity mux's inputs and
// the hexapod's command topic, which has no mux in front of it.
var DefaultClientPublishAllowlist = []string{"(.*/)?teleoperation/cmd_vel", "(.*/)?autonomy/cmd_vel", "(.*/)?hexapod/cmd_vel"}

// DefaultClientParamSetDenylist: parameters (as /node.param) a client may
// not set or unset: clock source, velocity and speed limits, timers and
// timeouts (such as the mux's teleoperation_idle_timer), and the topics
// velocity commands go to.
var DefaultClientParamSetDenylist = []string{
	`.*\.use_sim_time`,
	`.*\..*(velocity|speed|accel|acceleration|limit|limits).*`,
	`.*\..*(timer|timeout|timeouts)`,
	`.*\..*cmd_vel.*`,
}

// setParametersService matches the parameter services whose calls would
// bypass the parameter-set policy.
var setParametersService = regexp.MustCompile(`^(.*/)?(set_parameters|set_parameters_atomically|load_parameters)$`)

// permitted reports whether name may be used under a deny list with
// exceptions: it matches allow, or no pattern of deny.
func permitted(deny, allow []*regexp.Regexp, name string) bool {
	if len(deny) == 0 {
		return true
	}
	if len(allow) > 0 && allowed(allow, name) {
		return true
	}
	return !allowed(deny, name)
}

// originAllowed decides whether a WebSocket handshake may proceed:
//   - no Origin header: not a browser (Foxglove desktop's main process,
//     our CLI tools, scripts); allowed;
//   - an origin listed in AllowedOrigins (or "*" listed); allowed;
//   - the page's own origin: http(s)://host[:port] equal to the request's
//     Host, when that host is a loopback name, an IP literal or one of
//     OwnHosts. Any other host name could be an attacker's domain
//     rebound to our address (DNS rebinding), for which Origin and Host
//     agree as well.
func (s *Server) originAllowed(r *http.Request) bool {
	origins := r.Header.Values("Origin")
	if len(origins) == 0 {
		return true
	}
	if len(origins) > 1 {
		return false
	}
	origin := strings.TrimSpace(origins[0])
	for _, a := range s.opts.AllowedOrigins {
		if a == "" {
			continue // an empty list is written [""] on the command line
		}
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return false
	}
	return s.ownHost(u.Hostname())
}

// ownHost reports whether a host name from a Host header can only name
// this server: a loopback name, an IP literal, or a configured name.
func (s *Server) ownHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if net.ParseIP(host) != nil {
		return true
	}
	return slices.ContainsFunc(s.opts.OwnHosts, func(h string) bool { return strings.EqualFold(h, host) })
}

// throttle lets a log line through at most once per interval and counts
// the ones held back.
type throttle struct {
	mu         sync.Mutex
	interval   time.Duration
	last       time.Time
	suppressed uint64
}

// allow reports whether a line may be logged now, and how many were held
// back since the last one.
func (t *throttle) allow(now time.Time) (bool, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && now.Sub(t.last) < t.interval {
		t.suppressed++
		return false, 0
	}
	n := t.suppressed
	t.last, t.suppressed = now, 0
	return true, n
}

// maxLoggedOrigins bounds the set of refused origins remembered for
// logging each one once.
const maxLoggedOrigins = 64

// refuseOrigin answers a handshake with 403, counts it and logs it: the
// first refusal of each origin (up to maxLoggedOrigins of them), the rest
// at most once per LogInterval with the number held back.
func (s *Server) refuseOrigin(w http.ResponseWriter, r *http.Request) {
	total := s.originRefused.Add(1)
	s.count(CountOriginRefused)
	http.Error(w, "Forbidden: WebSocket connections from this origin are not allowed (see the bridge's allowed_origins parameter)", http.StatusForbidden)
	origin := r.Header.Get("Origin")
	if len(origin) > 200 {
		origin = origin[:200] + "…"
	}
	s.mu.Lock()
	_, seen := s.refusedOrigins[origin]
	first := !seen && len(s.refusedOrigins) < maxLoggedOrigins
	if first {
		s.refusedOrigins[origin] = struct{}{}
	}
	s.mu.Unlock()
	if first {
		s.opts.Logger.Warnf("refused a WebSocket connection from %s: Origin %q (Host %q) is neither this server's page nor in allowed_origins (%d refused so far; later refusals of this origin are counted, not logged)",
			r.RemoteAddr, origin, r.Host, total)
		return
	}
	if ok, held := s.refusalLog.allow(time.Now()); ok {
		s.opts.Logger.Warnf("refused a WebSocket connection from %s: Origin %q (%d refused so far, %d not logged since the last line)",
			r.RemoteAddr, origin, total, held)
	}
}

func (s *Server) count(name string) {
	if s.opts.OnCount != nil {
		s.opts.OnCount(name)
	}
}

// Token checks: after maxTokenFailures wrong or missing tokens from one
// address, its handshakes are refused (429) for tokenBlockTime.
const (
	maxTokenFailures = 5
	tokenBlockTime   = time.Minute
	maxTrackedAddrs  = 4096
)

// tokenFailures is the recent failed attempts of one address.
type tokenFailures struct {
	n     int
	until time.Time // refused until then once n reached maxTokenFailures
}

// requestToken returns the token a handshake carries: the token query
// parameter (a browser's WebSocket cannot set headers) or an
// Authorization: Bearer header.
func requestToken(r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(a)
	}
	return ""
}

// checkToken answers a handshake that lacks Options.Token (401) or comes
// from an address with too many failures (429) and returns false; true
// when the handshake may proceed.
func (s *Server) checkToken(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	now := time.Now()
	s.mu.Lock()
	f := s.tokenFails[host]
	blocked := f != nil && f.n >= maxTokenFailures && now.Before(f.until)
	s.mu.Unlock()
	if blocked {
		s.refuseConn(w, r, http.StatusTooManyRequests, "too many failed attempts from "+host+"; try again later",
			"too many failed token attempts")
		return false
	}
	if subtle.ConstantTimeCompare([]byte(requestToken(r)), []byte(s.opts.Token)) == 1 {
		s.mu.Lock()
		delete(s.tokenFails, host)
		s.mu.Unlock()
		return true
	}
	s.mu.Lock()
	if f == nil || (f.n >= maxTokenFailures && !now.Before(f.until)) {
		if len(s.tokenFails) >= maxTrackedAddrs {
			clear(s.tokenFails)
		}
		f = &tokenFailures{}
		s.tokenFails[host] = f
	}
	f.n++
	if f.n >= maxTokenFailures {
		f.until = now.Add(tokenBlockTime)
	}
	s.mu.Unlock()
	s.refuseConn(w, r, http.StatusUnauthorized, "a token is required (?token=… or Authorization: Bearer …)", "missing or wrong token")
	return false
}

// refuseConn answers a handshake with status, counts it as a refused
// connection and logs it throttled.
func (s *Server) refuseConn(w http.ResponseWriter, r *http.Request, status int, body, why string) {
	total := s.originRefused.Add(1)
	s.count(CountOriginRefused)
	http.Error(w, body, status)
	if ok, held := s.refusalLog.allow(time.Now()); ok {
		s.opts.Logger.Warnf("refused a WebSocket connection from %s: %s (%d refused so far, %d not logged since the last line)",
			r.RemoteAddr, why, total, held)
	}
}

// reserveClient takes one of the MaxClients places for a handshake that
// passed the checks; releaseClient gives it back when the connection ends
// (or fails to open).
func (s *Server) reserveClient() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.connecting >= s.opts.MaxClients {
		return false
	}
	s.connecting++
	return true
}

func (s *Server) releaseClient() {
	s.mu.Lock()
	s.connecting--
	s.mu.Unlock()
}
