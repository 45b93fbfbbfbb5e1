package ros

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
	type_description_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/type_description_interfaces/msg"
	type_description_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/type_description_interfaces/srv"
)

// Failure reasons of ~/get_type_description. The first two are rcl's
// strings (rcl/src/rcl/node.c); rcl does not look at type_name, we reject
// a non-empty type_name that names another type.
const (
	typeDescBadHash  = "Failed to parse type hash"
	typeDescNotInUse = "Type not currently in use by this node"
)

// startTypeDescriptionParam is the read-only parameter every Jazzy node
// declares; false at node creation means no ~/get_type_description.
const startTypeDescriptionParam = "start_type_description_service"

// typeUser is implemented by entities that use interface types. The types
// a node's entities use are its type cache (rcl's node type cache): the
// ~/get_type_description service answers for exactly these types.
type typeUser interface {
	usedTypes() []*rosidl.TypeDescription
}

func (p *publisher) usedTypes() []*rosidl.TypeDescription    { return descsOf(p.ti) }
func (s *Subscription) usedTypes() []*rosidl.TypeDescription { return descsOf(s.ti) }
func (c *clockReader) usedTypes() []*rosidl.TypeDescription {
	return descsOf(rosgraph_msgs_msg.Clock_TypeInfo)
}

// usedTypes of a service: the service type (what rcl registers), its
// request and response types (whose hashes the rq/rr endpoints carry) and,
// for an action's send_goal, the action type.
func (s *Service) usedTypes() []*rosidl.TypeDescription {
	return withAlso(descsOf(s.reqT, s.respT), s.also)
}
func (c *client) usedTypes() []*rosidl.TypeDescription {
	return withAlso(descsOf(c.reqT, c.respT), c.also)
}

func withAlso(ds []*rosidl.TypeDescription, also *rosidl.TypeDescription) []*rosidl.TypeDescription {
	if also != nil {
		ds = append(ds, also)
	}
	return ds
}

// descsOf returns the descriptions of the given types and, for the halves
// of a service, of the service type; types without one are skipped.
func descsOf(tis ...*rosidl.TypeInfo) []*rosidl.TypeDescription {
	var out []*rosidl.TypeDescription
	for i, ti := range tis {
		if ti == nil {
			continue
		}
		if ti.Desc != nil {
			out = append(out, ti.Desc)
		}
		if i == 0 && ti.ServiceDesc != nil {
			out = append(out, ti.ServiceDesc)
		}
	}
	return out
}

// typeDescState is a node's memo of description hashes (computing one
// means serializing and hashing the full description).
type typeDescState struct {
	mu     sync.Mutex
	hashes map[*rosidl.TypeDescription]string
}

func (st *typeDescState) hash(d *rosidl.TypeDescription) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if h, ok := st.hashes[d]; ok {
		return h
	}
	if st.hashes == nil {
		st.hashes = map[*rosidl.TypeDescription]string{}
	}
	h := d.TypeHash()
	st.hashes[d] = h
	return h
}

// usedTypeByHash returns the description of a type one of the node's
// entities uses whose RIHS01 hash is hash, or nil.
func (n *Node) usedTypeByHash(hash string) *rosidl.TypeDescription {
	n.mu.Lock()
	ents := append([]entity(nil), n.entities...)
	n.mu.Unlock()
	for _, e := range ents {
		tu, ok := e.(typeUser)
		if !ok {
			continue
		}
		for _, d := range tu.usedTypes() {
			if n.ext.typeDesc.hash(d) == hash {
				return d
			}
		}
	}
	return nil
}

// usedTypeHashes maps the RIHS01 hash of every type the node's
// publishers, subscriptions, services and clients use to its name: the
// types ~/get_type_description answers for.
func (n *Node) usedTypeHashes() map[string]string {
	n.mu.Lock()
	ents := append([]entity(nil), n.entities...)
	n.mu.Unlock()
	out := map[string]string{}
	for _, e := range ents {
		if tu, ok := e.(typeUser); ok {
			for _, d := range tu.usedTypes() {
				out[n.ext.typeDesc.hash(d)] = d.Name
			}
		}
	}
	return out
}

// parseTypeHash accepts "RIHS01_" followed by 64 hex digits (either case,
// as rosidl_parse_type_hash_string) and returns it in lower case.
func parseTypeHash(s string) (string, bool) {
	const prefix = "RIHS01_"
	if len(s) != len(prefix)+64 || !strings.HasPrefix(s, prefix) {
		return "", false
	}
	for _, c := range s[len(prefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", false
		}
	}
	return prefix + strings.ToLower(s[len(prefix):]), true
}

// getTypeDescription answers a GetTypeDescription request from the node's
// type cache. It never fails: problems are reported in the response.
func (n *Node) getTypeDescription(req *type_description_interfaces_srv.GetTypeDescription_Request) *type_description_interfaces_srv.GetTypeDescription_Response {
	resp := &type_description_interfaces_srv.GetTypeDescription_Response{
		TypeSources:      []type_description_interfaces_msg.TypeSource{},
		ExtraInformation: []type_description_interfaces_msg.KeyValue{},
	}
	hash, ok := parseTypeHash(req.TypeHash)
	if !ok {
		resp.FailureReason = typeDescBadHash
		return resp
	}
	d := n.usedTypeByHash(hash)
	if d == nil {
		resp.FailureReason = typeDescNotInUse
		return resp
	}
	if req.TypeName != "" && req.TypeName != d.Name {
		resp.FailureReason = fmt.Sprintf("Type name %q does not match the type %s with hash %s", req.TypeName, d.Name, hash)
		return resp
	}
	resp.TypeDescription = typeDescriptionMsg(d)
	if req.IncludeTypeSources {
		for _, s := range d.Sources() {
			resp.TypeSources = append(resp.TypeSources, type_description_interfaces_msg.TypeSource{
				TypeName: s.TypeName, Encoding: s.Encoding, RawFileContents: s.RawFileContents,
			})
		}
	}
	resp.Successful = true
	return resp
}

// typeDescriptionMsg converts a runtime type description into the
// type_description_interfaces/msg/TypeDescription message: d's individual
// description and those of every type it references, sorted by name.
func typeDescriptionMsg(d *rosidl.TypeDescription) type_description_interfaces_msg.TypeDescription {
	refs := d.Referenced()
	out := type_description_interfaces_msg.TypeDescription{
		TypeDescription:            individualMsg(d),
		ReferencedTypeDescriptions: make([]type_description_interfaces_msg.IndividualTypeDescription, 0, len(refs)),
	}
	for _, r := range refs {
		out.ReferencedTypeDescriptions = append(out.ReferencedTypeDescriptions, individualMsg(r))
	}
	return out
}

func individualMsg(d *rosidl.TypeDescription) type_description_interfaces_msg.IndividualTypeDescription {
	m := type_description_interfaces_msg.IndividualTypeDescription{
		TypeName: d.Name,
		Fields:   make([]type_description_interfaces_msg.Field, 0, len(d.Fields)),
	}
	for _, f := range d.Fields {
		m.Fields = append(m.Fields, type_description_interfaces_msg.Field{
			Name: f.Name,
			Type: type_description_interfaces_msg.FieldType{
				TypeId:         f.TypeID,
				Capacity:       f.Capacity,
				StringCapacity: f.StringCapacity,
				NestedTypeName: f.NestedTypeName,
			},
			DefaultValue: f.DefaultValue,
		})
	}
	return m
}

// initTypeDescriptionService declares the read-only parameter
// start_type_description_service (default true; -p and parameter files
// may override it at startup) and, when it is true, creates
// ~/get_type_description with the default services QoS, as rcl does.
// Humble has neither.
func (n *Node) initTypeDescriptionService() error {
	if n.ctx.Distro() == Humble {
		return nil
	}
	v, err := n.DeclareParameter(startTypeDescriptionParam, true, ParamDescriptor{
		Description: "Offer ~/get_type_description (type_description_interfaces/srv/GetTypeDescription); read-only, set at startup",
		ReadOnly:    true,
	})
	if err != nil {
		return err
	}
	if !v.Bool() {
		return nil
	}
	if _, err := NewService(n, "~/get_type_description", type_description_interfaces_srv.GetTypeDescription,
		func(_ context.Context, req *type_description_interfaces_srv.GetTypeDescription_Request) (*type_description_interfaces_srv.GetTypeDescription_Response, error) {
			return n.getTypeDescription(req), nil
		}); err != nil {
		return fmt.Errorf("type description service: %w", err)
	}
	return nil
}
