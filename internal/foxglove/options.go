package foxglove

import (
	"fmt"
	"net/http"
	"regexp"
	"time"

	"go.uber.org/zap"
)

// Options configure a Server. Zero values take the defaults noted.
type Options struct {
	// Name is sent in serverInfo (default "foxglove_bridge").
	Name string
	// Capabilities announced in serverInfo; a client request that needs a
	// capability not listed is answered with an error status.
	Capabilities []string
	// SupportedEncodings for client publishing and service calls.
	SupportedEncodings []string
	// Metadata sent in serverInfo.
	Metadata map[string]string
	// Whitelists of full-match regular expressions (see CompileWhitelist);
	// nil allows everything.
	TopicWhitelist, ServiceWhitelist, ParamWhitelist, ClientTopicWhitelist []*regexp.Regexp
	// SendBufferLimit bounds the messageData bytes waiting for one client
	// (default 10 MB, as foxglove_bridge's send_buffer_limit); beyond it
	// older ones are dropped, the newest of each subscription kept (see
	// sendQueue).
	SendBufferLimit int
	// SendQueueLength bounds the number of messageData frames waiting for
	// one client (default 1024).
	SendQueueLength int
	// ControlQueueLength bounds the JSON messages and service responses
	// waiting for one client (default 4096); a client that falls this far
	// behind is disconnected.
	ControlQueueLength int
	// CallTimeout bounds a service call (default 30 s); ParamTimeout a
	// parameter request (default 5 s).
	CallTimeout, ParamTimeout time.Duration
	// MaxPendingCalls bounds the service calls and parameter requests in
	// flight per client (default 32).
	MaxPendingCalls int
	// Static serves plain HTTP requests (the dashboard page); nil answers
	// them with 404.
	Static http.Handler
	// Logger receives the server's log lines (default: none).
	Logger *zap.SugaredLogger
	// DropLogInterval is the minimum time between two log lines about the
	// drops of one client (default 10 s).
	DropLogInterval time.Duration
	// OnDrop, if set, is called with the number of messageData frames
	// dropped for a slow client (from the publishing goroutine; it must
	// not block).
	OnDrop func(n int)

	// AllowedOrigins are the browser origins (scheme://host[:port],
	// compared case-insensitively) that may open a WebSocket besides the
	// page's own; "*" allows any. Handshakes without an Origin header
	// (not from a browser) are allowed. See originAllowed.
	AllowedOrigins []string
	// OwnHosts are host names that count as this server for the
	// same-origin rule besides loopback names and IP literals (the
	// configured listen address, a name the operator uses).
	OwnHosts []string
	// ClientPublishDenylist and ClientPublishAllowlist (full-match
	// regular expressions): a client may publish on a topic that
	// ClientTopicWhitelist allows and that matches the allowlist or no
	// pattern of the denylist. Nil denylist: no restriction.
	ClientPublishDenylist, ClientPublishAllowlist []*regexp.Regexp
	// ParamSetDenylist and ParamSetAllowlist do the same for the
	// parameters (/node.param) a client may set or unset. While the
	// denylist is not empty, service calls to the parameter services
	// (set_parameters, set_parameters_atomically, load_parameters) are
	// refused too, as they would bypass it.
	ParamSetDenylist, ParamSetAllowlist []*regexp.Regexp
	// MaxClients bounds the clients connected at once (default 16); a
	// handshake beyond it is refused with 503.
	MaxClients int
	// MaxClientChannels bounds the channels one client may advertise
	// (default 64); MaxSubscriptions its subscriptions (default 256).
	MaxClientChannels, MaxSubscriptions int
	// MaxMessageSize bounds a message a client sends, in bytes (default
	// 8 MiB); a larger one closes the connection (status 1009). Reading
	// a message holds at most about twice this much memory.
	MaxMessageSize int64
	// LogInterval is the minimum time between two log lines about one
	// client's errors, or about refused connections (default 10 s).
	LogInterval time.Duration
	// Token, if set, must be given by every WebSocket handshake, as the
	// token query parameter or an Authorization: Bearer header; a wrong
	// or missing one is refused with 401, and an address with 5 failures
	// is refused (429) for a minute. It is checked after the Origin.
	Token string
	// OnCount, if set, is called with a Count* name for every refusal
	// and client error (it must not block).
	OnCount func(counter string)
	// ClientTimeout, when positive, supervises every client: pinged every
	// ClientTimeout/4, a client heard from for none of ClientTimeout is
	// lost (Session.Silent), and what it sent meanwhile is discarded
	// (liveness.go). Zero: clients are not supervised.
	ClientTimeout time.Duration
}

func (o *Options) setDefaults() {
	if o.Name == "" {
		o.Name = "foxglove_bridge"
	}
	if o.SendBufferLimit <= 0 {
		o.SendBufferLimit = 10_000_000
	}
	if o.SendQueueLength <= 0 {
		o.SendQueueLength = 1024
	}
	if o.ControlQueueLength <= 0 {
		o.ControlQueueLength = 4096
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.ParamTimeout <= 0 {
		o.ParamTimeout = 5 * time.Second
	}
	if o.MaxPendingCalls <= 0 {
		o.MaxPendingCalls = 32
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop().Sugar()
	}
	if o.DropLogInterval <= 0 {
		o.DropLogInterval = 10 * time.Second
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 16
	}
	if o.MaxClientChannels <= 0 {
		o.MaxClientChannels = 64
	}
	if o.MaxSubscriptions <= 0 {
		o.MaxSubscriptions = 256
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = 8 << 20
	}
	if o.LogInterval <= 0 {
		o.LogInterval = 10 * time.Second
	}
}

// CompileWhitelist compiles regular expressions that must match a whole
// name (as std::regex_match in foxglove_bridge).
func CompileWhitelist(patterns []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("whitelist pattern %q: %w", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func allowed(list []*regexp.Regexp, name string) bool {
	if list == nil {
		return true
	}
	for _, re := range list {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}
