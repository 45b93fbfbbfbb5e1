package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// GoPackage is one generated Go package: msgs/<pkg>/<sub>.
type GoPackage struct {
	Pkg, Sub string
	Dir      string
	Msgs     []*MsgSpec
	Srvs     []*SrvSpec
	Actions  []*ActionSpec
}

// GoName returns the Go package name, e.g. "geometry_msgs_msg".
func (p *GoPackage) GoName() string { return p.Pkg + "_" + p.Sub }

// Universe is every interface found under the root, resolved.
type Universe struct {
	// Types maps "pkg/sub/Name" to every message type, including service
	// halves, the derived action types and the hash-only event types.
	Types map[string]*MsgSpec
	// Packages are sorted by directory.
	Packages []*GoPackage
	// extra holds the types that exist only for hashing: the X_Event type
	// Jazzy derives for every service, and the description types of
	// services (pkg/srv/X) and actions (pkg/action/X).
	extra map[string]*MsgSpec
}

// Load parses every msg/srv/action file under root (root/<pkg>/<sub>/*.<sub>)
// and resolves all type references.
func Load(root string) (*Universe, error) {
	u := &Universe{Types: map[string]*MsgSpec{}, extra: map[string]*MsgSpec{}}
	pkgDirs, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read interface root: %w", err)
	}
	for _, pd := range pkgDirs {
		if !pd.IsDir() {
			continue
		}
		for _, sub := range []string{"msg", "srv", "action"} {
			dir := filepath.Join(root, pd.Name(), sub)
			files, err := filepath.Glob(filepath.Join(dir, "*."+sub))
			if err != nil {
				return nil, err
			}
			if len(files) == 0 {
				continue
			}
			sort.Strings(files)
			gp := &GoPackage{Pkg: pd.Name(), Sub: sub, Dir: dir}
			for _, f := range files {
				if err := u.loadFile(gp, f); err != nil {
					return nil, err
				}
			}
			u.Packages = append(u.Packages, gp)
		}
	}
	u.promoteEvents()
	if err := u.resolve(); err != nil {
		return nil, err
	}
	return u, nil
}

// eventInfoType is the type every X_Event type nests.
const eventInfoType = "service_msgs/msg/ServiceEventInfo"

// promoteEvents makes the X_Event types full types (generated with Go
// bindings) when their info type exists; without it they stay hash-only.
func (u *Universe) promoteEvents() {
	if _, ok := u.Types[eventInfoType]; !ok {
		return
	}
	for _, gp := range u.Packages {
		srvs := gp.Srvs
		for _, a := range gp.Actions {
			srvs = append(srvs, a.SendGoal, a.GetResult)
		}
		for _, s := range srvs {
			u.Types[s.Event.FullName()] = s.Event
			delete(u.extra, s.Event.FullName())
		}
	}
}

func (u *Universe) add(m *MsgSpec) error {
	if prev, ok := u.Types[m.FullName()]; ok {
		return fmt.Errorf("%s: type %s already defined in %s", m.File, m.FullName(), prev.File)
	}
	u.Types[m.FullName()] = m
	return nil
}

func (u *Universe) loadFile(gp *GoPackage, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	name := strings.TrimSuffix(filepath.Base(file), "."+gp.Sub)
	switch gp.Sub {
	case "msg":
		m, err := ParseMsg(file, gp.Pkg, name, text)
		if err != nil {
			return err
		}
		gp.Msgs = append(gp.Msgs, m)
		return u.add(m)
	case "srv":
		s, err := ParseSrv(file, gp.Pkg, name, text)
		if err != nil {
			return err
		}
		gp.Srvs = append(gp.Srvs, s)
		return u.addService(s)
	default:
		a, err := ParseAction(file, gp.Pkg, name, text)
		if err != nil {
			return err
		}
		gp.Actions = append(gp.Actions, a)
		for _, m := range []*MsgSpec{a.Goal, a.Result, a.Feedback, a.FeedbackMessage} {
			if err := u.add(m); err != nil {
				return err
			}
		}
		for _, s := range []*SrvSpec{a.SendGoal, a.GetResult} {
			if err := u.addService(s); err != nil {
				return err
			}
		}
		nestedField := func(name, typ string) Field {
			return Field{Name: name, Type: FieldType{Base: BaseType{Pkg: a.Pkg, Sub: "action", Name: typ}}}
		}
		u.extra[a.FullName()] = &MsgSpec{Pkg: a.Pkg, Sub: "action", Name: a.Name, File: file, Fields: []Field{
			nestedField("goal", a.Name+"_Goal"),
			nestedField("result", a.Name+"_Result"),
			nestedField("feedback", a.Name+"_Feedback"),
			nestedField("send_goal_service", a.Name+"_SendGoal"),
			nestedField("get_result_service", a.Name+"_GetResult"),
			nestedField("feedback_message", a.Name+"_FeedbackMessage"),
		}}
		return nil
	}
}

// addService registers the halves of s and the X_Event type that Jazzy
// derives for every service (needed only for the service type hash).
func (u *Universe) addService(s *SrvSpec) error {
	if err := u.add(s.Request); err != nil {
		return err
	}
	if err := u.add(s.Response); err != nil {
		return err
	}
	sub := s.Request.Sub
	nested := func(m *MsgSpec) BaseType { return BaseType{Pkg: m.Pkg, Sub: m.Sub, Name: m.Name} }
	ev := &MsgSpec{Pkg: s.Pkg, Sub: sub, Name: s.Name + "_Event", File: s.Request.File, Fields: []Field{
		{Name: "info", Type: FieldType{Base: BaseType{Pkg: "service_msgs", Sub: "msg", Name: "ServiceEventInfo"}}},
		{Name: "request", Type: FieldType{Base: nested(s.Request), Array: BoundedSeq, Size: 1}},
		{Name: "response", Type: FieldType{Base: nested(s.Response), Array: BoundedSeq, Size: 1}},
	},
		// What `interface show` would print had it a .msg file.
		Text: "service_msgs/ServiceEventInfo info\n" +
			s.Request.Name + "[<=1] request\n" +
			s.Response.Name + "[<=1] response\n"}
	s.Event = ev
	u.extra[ev.FullName()] = ev
	u.extra[s.Pkg+"/"+sub+"/"+s.Name] = &MsgSpec{Pkg: s.Pkg, Sub: sub, Name: s.Name, File: s.Request.File, Fields: []Field{
		{Name: "request_message", Type: FieldType{Base: nested(s.Request)}},
		{Name: "response_message", Type: FieldType{Base: nested(s.Response)}},
		{Name: "event_message", Type: FieldType{Base: nested(ev)}},
	}}
	return nil
}

// resolve checks that every nested type exists and that no type contains
// itself.
func (u *Universe) resolve() error {
	names := make([]string, 0, len(u.Types))
	for n := range u.Types {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := u.Types[n]
		for _, f := range m.Fields {
			if f.Type.Base.IsNested() {
				if _, ok := u.Types[f.Type.Base.FullName()]; !ok {
					return &ParseError{m.File, f.Line, fmt.Sprintf("field %s: unknown type %s (no file %s)",
						f.Name, f.Type.Base.FullName(), f.Type.Base.Pkg+"/msg/"+f.Type.Base.Name+".msg")}
				}
			}
		}
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string, path []string) error
	visit = func(n string, path []string) error {
		switch state[n] {
		case 1:
			return fmt.Errorf("recursive message definition: %s", strings.Join(append(path, n), " -> "))
		case 2:
			return nil
		}
		state[n] = 1
		for _, f := range u.Types[n].Fields {
			if f.Type.Base.IsNested() {
				if err := visit(f.Type.Base.FullName(), append(path, n)); err != nil {
					return err
				}
			}
		}
		state[n] = 2
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return err
		}
	}
	return nil
}

// lookup returns a message type, including hash-only event types.
func (u *Universe) lookup(name string) *MsgSpec {
	if m, ok := u.Types[name]; ok {
		return m
	}
	return u.extra[name]
}
