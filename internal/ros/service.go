package ros

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// Response delivery as rmw_cyclonedds' send_response: wait up to 100 ms,
// polling every 10 ms, for the reply writer to match the client's reply
// reader.
const (
	replyMatchTimeout = 100 * time.Millisecond
	replyMatchPoll    = 10 * time.Millisecond
)

// requestHeader is rmw_cyclonedds' cdds_request_header: the client id (the
// instance handle of the client's request writer) and the sequence number,
// at the start of every request and reply body.
type requestHeader struct {
	GUID uint64
	Seq  int64
}

// encodeWithHeader serializes h followed by m.
func encodeWithHeader(h requestHeader, m rosidl.Message, buf []byte) []byte {
	e := cdr.NewEncoder(buf)
	e.Uint64(h.GUID)
	e.Int64(h.Seq)
	m.MarshalCDR(e)
	return e.Bytes()
}

// decodeWithHeader reads the header and then m from a request or reply.
func decodeWithHeader(payload []byte, m rosidl.Message) (requestHeader, error) {
	var h requestHeader
	d, err := cdr.NewDecoder(payload)
	if err != nil {
		return h, err
	}
	h.GUID = d.Uint64()
	h.Seq = d.Int64()
	if err := d.Err(); err != nil {
		return h, fmt.Errorf("request header: %w", err)
	}
	if err := m.UnmarshalCDR(d); err != nil {
		return h, fmt.Errorf("decode %s: %w", m.ROSType().Name, err)
	}
	return h, nil
}

// serviceTypes returns the request and response type information of a
// service and checks that they belong together.
func serviceTypes(req, resp *rosidl.TypeInfo) error {
	if err := checkType(req); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if err := checkType(resp); err != nil {
		return fmt.Errorf("response: %w", err)
	}
	return nil
}

// incomingRequest is a request waiting for the service callback.
type incomingRequest struct {
	h      requestHeader
	writer dds.InstanceHandle // the client's request writer
	req    rosidl.Message
}

// Service serves one ROS service. Its handler runs on the node's callback
// goroutine, one request at a time; requests wait in a queue of the QoS
// depth (oldest dropped when full).
type Service struct {
	n         *Node
	name      string
	id        csid
	reqT      *rosidl.TypeInfo // request and response types (type cache)
	respT     *rosidl.TypeInfo
	also      *rosidl.TypeDescription // action type of send_goal (type cache)
	reqReader *dds.Reader
	repWriter *dds.Writer
	in        *inbox[incomingRequest]
	malformed atomic.Uint64
	lost      atomic.Uint64

	// Caches of respond (created lazily, guarded by cacheMu since
	// deferred responses may come from any goroutine): the clientid of
	// request writers seen, and the clientids whose reply reader has
	// matched. Instance handles are never reused within a process, and a
	// client that leaves only makes a later write go nowhere, as in rmw.
	cacheMu        sync.Mutex
	clientIDs      map[dds.InstanceHandle]string
	matchedClients map[string]bool
}

// NewService creates a service server under name (relative, absolute or
// "~/"; remapped) with QoSServices unless WithQoS is given. The handler
// runs on the node's callback goroutine; ctx is cancelled when the node
// closes. Returning an error sends no response (the error is logged and
// the caller times out), so prefer reporting failures inside the response
// (success=false, message) where the service type allows it.
//
//	srv, err := ros.NewService(node, "~/start", func(ctx context.Context, req *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) { ... })
func NewService[Req, Resp any, PReq rosidl.Ptr[Req], PResp rosidl.Ptr[Resp]](n *Node, name string, handler func(ctx context.Context, req PReq) (PResp, error), opts ...EndpointOption) (*Service, error) {
	if handler == nil {
		return nil, fmt.Errorf("ros: service %q: nil handler", name)
	}
	return newService(n, name, PReq(nil).ROSType(), PResp(nil).ROSType(),
		func() rosidl.Message { return PReq(new(Req)) },
		func(ctx context.Context, m rosidl.Message) (rosidl.Message, error) {
			resp, err := handler(ctx, m.(PReq))
			if err != nil {
				return nil, err
			}
			if resp == nil {
				return nil, errors.New("handler returned a nil response")
			}
			return resp, nil
		}, opts)
}

func newService(n *Node, name string, reqT, respT *rosidl.TypeInfo, newReq func() rosidl.Message, handle func(context.Context, rosidl.Message) (rosidl.Message, error), opts []EndpointOption) (*Service, error) {
	o := applyOptions(opts)
	qos := QoSServices
	if o.qos != nil {
		qos = *o.qos
	}
	depth := 0
	if qos.History != HistoryKeepAll {
		depth = qos.effectiveDepth()
	}
	return newServiceEndpoints(n, name, reqT, respT, newReq, qos, depth, o.also, func(s *Service) func(incomingRequest) {
		return func(r incomingRequest) {
			resp, err := handle(n.runCtx, r.req)
			if err != nil {
				n.Logger().Errorf("service %s: no response sent: %v", s.name, err)
				return
			}
			if err := s.respond(r, resp); err != nil {
				n.Logger().Warnf("service %s: %v", s.name, err)
			}
		}
	})
}

// newServiceEndpoints creates the request reader and reply writer of a
// service (with the rmw_cyclonedds serviceid and type hashes in their user
// data) and registers it on the node. Requests are queued in an inbox of
// the given depth (0: unbounded) and handed, on the node's callback
// goroutine, to the function onRequest returns for the new Service.
func newServiceEndpoints(n *Node, name string, reqT, respT *rosidl.TypeInfo, newReq func() rosidl.Message, qos QoS, depth int,
	also *rosidl.TypeDescription, onRequest func(s *Service) func(incomingRequest)) (*Service, error) {
	if err := serviceTypes(reqT, respT); err != nil {
		return nil, fmt.Errorf("ros: service %q: %w", name, err)
	}
	fqn, err := n.ResolveServiceName(name)
	if err != nil {
		return nil, fmt.Errorf("ros: service: %w", err)
	}
	part := n.ctx.part
	reqTopic, err := part.Topic(ddsTopicName(requestPrefix, fqn, requestSuffix, qos.AvoidROSNamespaceConventions), reqT.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	repTopic, err := part.Topic(ddsTopicName(replyPrefix, fqn, replySuffix, qos.AvoidROSNamespaceConventions), respT.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	s := &Service{n: n, name: fqn, id: n.ctx.nextCSID(), reqT: reqT, respT: respT, also: also}
	idData := "serviceid=" + s.id.String() + ";"
	wq, err := qos.ddsQoS([]byte(idData+typeHashUserData(n.ctx.distro, respT.Hash)), false)
	if err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	rq, err := qos.ddsQoS([]byte(idData+typeHashUserData(n.ctx.distro, reqT.Hash)), false)
	if err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	if s.repWriter, err = part.NewWriter(repTopic, wq); err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	s.in = newInbox(n, depth, onRequest(s))
	s.reqReader, err = part.NewReader(reqTopic, rq, func(batch []dds.Sample) {
		for _, smp := range batch {
			m := newReq()
			h, err := decodeWithHeader(smp.Data, m)
			if err != nil {
				s.malformed.Add(1)
				continue
			}
			s.in.push(incomingRequest{h: h, writer: smp.PublicationHandle, req: m})
		}
	})
	if err != nil {
		s.repWriter.Close()
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	if err := n.addEntity(s); err != nil {
		return nil, err
	}
	return s, nil
}

// respond sends resp to the client that wrote r, as rmw_cyclonedds'
// send_response: look up the request writer's clientid; if the writer is
// gone, drop silently; if it has no clientid, send at once; otherwise wait
// up to 100 ms for the reply writer to match a reader with that clientid.
func (s *Service) respond(r incomingRequest, resp rosidl.Message) error {
	if v, ok := resp.(validator); ok {
		if err := v.Validate(); err != nil {
			s.lost.Add(1)
			return fmt.Errorf("invalid response not sent: %w", err)
		}
	}
	s.cacheMu.Lock()
	clientID, known := s.clientIDs[r.writer]
	matched := s.matchedClients[clientID]
	s.cacheMu.Unlock()
	if !known {
		var err error
		if clientID, known, err = s.clientIDOf(r.writer); err != nil {
			return err
		}
		if !known {
			s.lost.Add(1)
			return nil // client gone
		}
		s.cacheMu.Lock()
		if s.clientIDs == nil {
			s.clientIDs = map[dds.InstanceHandle]string{}
		}
		s.clientIDs[r.writer] = clientID
		matched = s.matchedClients[clientID]
		s.cacheMu.Unlock()
	}
	if clientID != "" && !matched {
		deadline := time.Now().Add(replyMatchTimeout)
		for !s.replyReaderMatched(clientID) {
			if time.Now().After(deadline) {
				s.lost.Add(1)
				return fmt.Errorf("client %s has no matched reply reader after %v; response dropped", clientID, replyMatchTimeout)
			}
			time.Sleep(replyMatchPoll)
		}
		s.cacheMu.Lock()
		if s.matchedClients == nil {
			s.matchedClients = map[string]bool{}
		}
		s.matchedClients[clientID] = true
		s.cacheMu.Unlock()
	}
	if err := s.repWriter.Write(encodeWithHeader(r.h, resp, nil)); err != nil {
		return fmt.Errorf("sending response: %w", err)
	}
	return nil
}

// clientIDOf returns the clientid user data of a matched request writer;
// known is false when the writer is no longer matched.
func (s *Service) clientIDOf(writer dds.InstanceHandle) (id string, known bool, err error) {
	eps, err := s.reqReader.MatchedWriters()
	if err != nil {
		return "", false, fmt.Errorf("matched request writers: %w", err)
	}
	for _, ep := range eps {
		if ep.Handle == writer {
			return parseUserData(ep.UserData)["clientid"], true, nil
		}
	}
	return "", false, nil
}

func (s *Service) replyReaderMatched(clientID string) bool {
	eps, err := s.repWriter.MatchedReaders()
	if err != nil {
		return false
	}
	for _, ep := range eps {
		if parseUserData(ep.UserData)["clientid"] == clientID {
			return true
		}
	}
	return false
}

func (s *Service) gids() (readers, writers []dds.GUID) {
	return []dds.GUID{s.reqReader.GUID()}, []dds.GUID{s.repWriter.GUID()}
}

func (s *Service) close() error {
	err := s.reqReader.Close()
	s.in.close()
	return errors.Join(err, s.repWriter.Close())
}

// Close closes the service server.
func (s *Service) Close() error {
	err := s.close()
	s.n.removeEntity(s)
	return err
}

// Name returns the fully qualified service name.
func (s *Service) Name() string { return s.name }

// Malformed returns how many requests could not be decoded (dropped).
func (s *Service) Malformed() uint64 { return s.malformed.Load() }

// Dropped returns how many requests were dropped because the queue was full.
func (s *Service) Dropped() uint64 { return s.in.dropped.Load() }

// Unanswered returns how many responses were not sent because the client
// was gone or its reply reader did not match in time.
func (s *Service) Unanswered() uint64 { return s.lost.Load() }
