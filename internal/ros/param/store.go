package param

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Errors returned (wrapped) by the Store; test with errors.Is.
var (
	ErrNotDeclared     = errors.New("parameter not declared")
	ErrAlreadyDeclared = errors.New("parameter already declared")
	ErrReadOnly        = errors.New("parameter is read-only")
	ErrWrongType       = errors.New("wrong parameter type")
	ErrInvalidValue    = errors.New("invalid parameter value")
	ErrRejected        = errors.New("parameter change rejected")
	ErrInvalidName     = errors.New("invalid parameter name")
)

// Validator inspects a proposed change (the parameters about to be set,
// with their new values; a deleted parameter has the zero Value) and
// returns a non-nil error to reject all of it. The error text becomes the
// SetParametersResult reason. A Validator runs with the store's change lock
// held: it may call Get, List and friends, but must not change parameters.
type Validator func(proposed []Parameter) error

// Event describes one accepted change, as carried by
// rcl_interfaces/msg/ParameterEvent.
type Event struct {
	New, Changed, Deleted []Parameter
}

// Result is the outcome of setting parameters
// (rcl_interfaces/msg/SetParametersResult).
type Result struct {
	Successful bool
	Reason     string
}

// RejectedError is returned when a Validator rejects a change. Reason is the
// validator's text, which is what ~/set_parameters reports.
type RejectedError struct {
	Reason string
}

// Error implements error.
func (e *RejectedError) Error() string { return "parameter change rejected: " + e.Reason }

// Is makes errors.Is(err, ErrRejected) true.
func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

func resultOf(err error) Result {
	var rej *RejectedError
	switch {
	case err == nil:
		return Result{Successful: true}
	case errors.As(err, &rej):
		return Result{Reason: rej.Reason}
	}
	return Result{Reason: err.Error()}
}

// ResultOf converts an error returned by SetAtomically to a Result: the
// validator's own text for a rejection, else the error text.
func ResultOf(err error) Result { return resultOf(err) }

// ListResult is the answer of List (rcl_interfaces/msg/ListParametersResult).
type ListResult struct {
	Names, Prefixes []string
}

// DepthRecursive asks List for every level below the prefixes.
const DepthRecursive = 0

// StoreOptions configures a Store. The zero value is valid.
type StoreOptions struct {
	// (optional) Overrides replace the default of a parameter when it is
	// declared (see Overrides.For). Nil means none.
	Overrides map[string]Value
	// (optional) OverrideSources names where each override came from
	// (Overrides.Sources); declaration errors quote it.
	OverrideSources map[string]string
	// (optional) OnEvent is called after every accepted declaration,
	// change or deletion, in order, with the change lock held. It must not
	// change parameters.
	OnEvent func(Event)
}

type entry struct {
	value Value
	desc  Descriptor
}

type validatorEntry struct {
	id int
	fn Validator
}

// Store holds the declared parameters of one node and enforces ROS 2
// semantics: declaration before use, static typing unless a descriptor
// allows dynamic typing, read-only parameters, ranges, and validators that
// may reject a change. All methods are safe for concurrent use; changes are
// serialized.
type Store struct {
	changeMu   sync.Mutex // serializes changes, validators and events
	mu         sync.RWMutex
	params     map[string]*entry
	overrides  map[string]Value
	sources    map[string]string
	validators []validatorEntry
	watchers   []watcherEntry
	nextID     int
	onEvent    func(Event)
}

type watcherEntry struct {
	id int
	fn func(Event)
}

// NewStore returns an empty store.
func NewStore(opts StoreOptions) *Store {
	ov := make(map[string]Value, len(opts.Overrides))
	for k, v := range opts.Overrides {
		ov[k] = v
	}
	src := make(map[string]string, len(opts.OverrideSources))
	for k, v := range opts.OverrideSources {
		src[k] = v
	}
	return &Store{params: map[string]*entry{}, overrides: ov, sources: src, onEvent: opts.OnEvent}
}

// OnSet adds a validator that is consulted before every change (including
// declarations). It returns a function that removes it.
func (s *Store) OnSet(v Validator) (remove func()) {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	s.nextID++
	id := s.nextID
	s.validators = append(s.validators, validatorEntry{id: id, fn: v})
	return func() {
		s.changeMu.Lock()
		defer s.changeMu.Unlock()
		s.validators = slices.DeleteFunc(s.validators, func(e validatorEntry) bool { return e.id == id })
	}
}

// OnChange adds f, called after every accepted change (not declarations)
// with the store's change lock held, before StoreOptions.OnEvent and before
// the change call returns. f must be quick and must not change parameters.
// It returns a function that removes f.
func (s *Store) OnChange(f func(Event)) (remove func()) {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	s.nextID++
	id := s.nextID
	s.watchers = append(s.watchers, watcherEntry{id: id, fn: f})
	return func() {
		s.changeMu.Lock()
		defer s.changeMu.Unlock()
		s.watchers = slices.DeleteFunc(s.watchers, func(e watcherEntry) bool { return e.id == id })
	}
}

// Override returns the override for name, if any.
func (s *Store) Override(name string) (Value, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.overrides[name]
	return v, ok
}

// Declare declares a parameter with a default value and a descriptor and
// returns its effective value: the override for name if there is one, else
// def. The value must match the descriptor (type, ranges) and pass the
// validators. With no default and no override the descriptor's Type must be
// set and DynamicTyping true, or an override must exist.
func (s *Store) Declare(name string, def Value, d Descriptor) (Value, error) {
	if err := ValidateName(name); err != nil {
		return Value{}, fmt.Errorf("declare: %w: %w", ErrInvalidName, err)
	}
	d = d.clone()
	d.Name = name
	if err := d.check(); err != nil {
		return Value{}, fmt.Errorf("declare %q: %w", name, err)
	}
	if err := def.checkFinite(); err != nil {
		return Value{}, fmt.Errorf("declare %q: default: %w: %w", name, ErrInvalidValue, err)
	}
	if d.Type == TypeNotSet {
		d.Type = def.typ
	} else if def.IsSet() && def.typ != d.Type && !d.DynamicTyping {
		return Value{}, fmt.Errorf("declare %q: %w: the default is of type %s but the descriptor says %s",
			name, ErrWrongType, def.typ, d.Type)
	}

	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	s.mu.RLock()
	_, exists := s.params[name]
	ov, hasOv := s.overrides[name]
	ovSrc := s.sources[name]
	s.mu.RUnlock()
	if ovSrc == "" {
		ovSrc = "override"
	}
	if exists {
		return Value{}, fmt.Errorf("declare %q: %w", name, ErrAlreadyDeclared)
	}
	value := def
	if hasOv {
		if conv, ok := ov.convertEmptyList(d.Type); ok {
			ov = conv
		} else if ov.emptyList && d.Type != TypeNotSet && !d.DynamicTyping {
			return Value{}, fmt.Errorf("declare %q: %w: %s gives an empty list but the parameter is of type %s",
				name, ErrWrongType, ovSrc, d.Type)
		}
		if d.Type != TypeNotSet && ov.typ != d.Type && !d.DynamicTyping {
			return Value{}, fmt.Errorf("declare %q: %w: %s gives %s of type %s but the parameter is of type %s",
				name, ErrWrongType, ovSrc, ov, ov.typ, d.Type)
		}
		value = ov
	}
	if !value.IsSet() && !d.DynamicTyping {
		return Value{}, fmt.Errorf("declare %q: no default value and no override for a statically typed parameter of type %s",
			name, d.Type)
	}
	if err := d.checkValue(value); err != nil {
		src := "default"
		if hasOv {
			src = ovSrc
		}
		return Value{}, fmt.Errorf("declare %q: %s: %w: %w", name, src, ErrInvalidValue, err)
	}
	p := []Parameter{{Name: name, Value: value}}
	if err := s.runValidators(p); err != nil {
		return Value{}, fmt.Errorf("declare %q: %w", name, err)
	}
	s.mu.Lock()
	s.params[name] = &entry{value: value, desc: d}
	s.mu.Unlock()
	s.emit(Event{New: p})
	return value, nil
}

// Undeclare removes a parameter. Read-only and statically typed parameters
// cannot be undeclared (as in rclcpp).
func (s *Store) Undeclare(name string) error {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	s.mu.RLock()
	e, ok := s.params[name]
	s.mu.RUnlock()
	switch {
	case !ok:
		return fmt.Errorf("undeclare %q: %w", name, ErrNotDeclared)
	case e.desc.ReadOnly:
		return fmt.Errorf("undeclare %q: %w", name, ErrReadOnly)
	case !e.desc.DynamicTyping:
		return fmt.Errorf("undeclare %q: %w: a statically typed parameter cannot be undeclared", name, ErrWrongType)
	}
	s.mu.Lock()
	delete(s.params, name)
	s.mu.Unlock()
	s.emit(Event{Deleted: []Parameter{{Name: name}}})
	return nil
}

// Has reports whether name is declared.
func (s *Store) Has(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.params[name]
	return ok
}

// Get returns the value of a declared parameter.
func (s *Store) Get(name string) (Value, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.params[name]
	if !ok {
		return Value{}, fmt.Errorf("get %q: %w", name, ErrNotDeclared)
	}
	return e.value, nil
}

// GetAll returns the values of the named parameters in order. Like rclcpp's
// parameter service it fails as a whole if any name is not declared.
func (s *Store) GetAll(names []string) ([]Value, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Value, len(names))
	for i, n := range names {
		e, ok := s.params[n]
		if !ok {
			return nil, fmt.Errorf("get %q: %w", n, ErrNotDeclared)
		}
		out[i] = e.value
	}
	return out, nil
}

// Types returns the type of each named parameter, TypeNotSet for names
// that are not declared.
func (s *Store) Types(names []string) []Type {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Type, len(names))
	for i, n := range names {
		if e, ok := s.params[n]; ok {
			out[i] = e.value.typ
		}
	}
	return out
}

// Describe returns the descriptors of the named parameters; it fails as a
// whole if any name is not declared.
func (s *Store) Describe(names []string) ([]Descriptor, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Descriptor, len(names))
	for i, n := range names {
		e, ok := s.params[n]
		if !ok {
			return nil, fmt.Errorf("describe %q: %w", n, ErrNotDeclared)
		}
		out[i] = e.desc.clone()
	}
	return out, nil
}

// Names returns all declared names, sorted.
func (s *Store) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.params))
	for n := range s.params {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// List implements ~/list_parameters with rclcpp's rules: with no prefixes,
// every name with fewer than depth dots (all for DepthRecursive); with
// prefixes, every name equal to a prefix or below it ("prefix." + rest)
// where rest, counted with its leading dot, has fewer than depth dots.
// Prefixes of the listed names (up to their last dot) are reported once
// each. Names come out sorted.
func (s *Store) List(prefixes []string, depth uint64) ListResult {
	res := ListResult{Names: []string{}, Prefixes: []string{}}
	for _, name := range s.Names() {
		all := len(prefixes) == 0 && (depth == DepthRecursive || uint64(strings.Count(name, ".")) < depth)
		match := slices.ContainsFunc(prefixes, func(p string) bool {
			if name == p {
				return true
			}
			if strings.HasPrefix(name, p+".") {
				rest := name[len(p):]
				return depth == DepthRecursive || uint64(strings.Count(rest, ".")) < depth
			}
			return false
		})
		if !all && !match {
			continue
		}
		res.Names = append(res.Names, name)
		if i := strings.LastIndexByte(name, '.'); i >= 0 && !slices.Contains(res.Prefixes, name[:i]) {
			res.Prefixes = append(res.Prefixes, name[:i])
		}
	}
	return res
}

// Set applies each parameter on its own, as ~/set_parameters does, and
// returns one Result per parameter.
func (s *Store) Set(params []Parameter) []Result {
	out := make([]Result, len(params))
	for i, p := range params {
		out[i] = resultOf(s.SetAtomically([]Parameter{p}))
	}
	return out
}

// SetValue sets one parameter.
func (s *Store) SetValue(name string, v Value) error {
	return s.SetAtomically([]Parameter{{Name: name, Value: v}})
}

// SetAtomically applies all parameters or none. A parameter with the zero
// Value deletes it (only with DynamicTyping). The validators see the whole
// batch.
func (s *Store) SetAtomically(params []Parameter) error {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	var ev Event
	s.mu.RLock()
	staged := make(map[string]Value, len(params))
	for _, p := range params {
		e, ok := s.params[p.Name]
		if !ok {
			s.mu.RUnlock()
			return fmt.Errorf("set %q: %w", p.Name, ErrNotDeclared)
		}
		if err := checkSet(p, e); err != nil {
			s.mu.RUnlock()
			return fmt.Errorf("set %q: %w", p.Name, err)
		}
		staged[p.Name] = p.Value
	}
	s.mu.RUnlock()
	if err := s.runValidators(params); err != nil {
		return err
	}
	s.mu.Lock()
	for _, p := range params {
		if !p.Value.IsSet() {
			if _, ok := s.params[p.Name]; ok {
				delete(s.params, p.Name)
				ev.Deleted = append(ev.Deleted, Parameter{Name: p.Name})
			}
			continue
		}
		if e, ok := s.params[p.Name]; ok {
			e.value = staged[p.Name]
			ev.Changed = append(ev.Changed, p)
		}
	}
	s.mu.Unlock()
	s.emit(ev)
	return nil
}

func checkSet(p Parameter, e *entry) error {
	if e.desc.ReadOnly {
		if r := e.desc.ReadOnlyReason; r != "" {
			return fmt.Errorf("%w: it can only be set at startup (%s)", ErrReadOnly, r)
		}
		return fmt.Errorf("%w: it can only be set at startup", ErrReadOnly)
	}
	if !p.Value.IsSet() {
		if !e.desc.DynamicTyping {
			return fmt.Errorf("%w: a statically typed parameter cannot be undeclared", ErrWrongType)
		}
		return nil
	}
	if !p.Value.typ.Valid() {
		return fmt.Errorf("%w: type %d is not a parameter type", ErrWrongType, p.Value.typ)
	}
	if p.Value.typ != e.value.typ && !e.desc.DynamicTyping {
		return fmt.Errorf("%w: the parameter is of type %s, setting it to type %s is not allowed",
			ErrWrongType, e.value.typ, p.Value.typ)
	}
	if err := e.desc.checkValue(p.Value); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidValue, err)
	}
	return nil
}

func (s *Store) runValidators(params []Parameter) error {
	cp := slices.Clone(params)
	for _, v := range s.validators {
		if err := v.fn(cp); err != nil {
			return &RejectedError{Reason: err.Error()}
		}
	}
	return nil
}

func (s *Store) emit(ev Event) {
	if len(ev.New)+len(ev.Changed)+len(ev.Deleted) == 0 {
		return
	}
	if len(ev.Changed)+len(ev.Deleted) > 0 {
		for _, w := range s.watchers {
			w.fn(ev)
		}
	}
	if s.onEvent != nil {
		s.onEvent(ev)
	}
}
