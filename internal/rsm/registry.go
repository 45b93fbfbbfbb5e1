package rsm

import (
	"fmt"
	"sort"
	"strings"
)

// Factory makes a fresh instance of a plugin state.
type Factory func() State

// Registry maps plugin names ("rsm::NavigationState") to factories; it is
// the Go replacement for pluginlib.
type Registry struct{ factories map[string]Factory }

// Names of the built-in plugin states (the original's class names).
const (
	CalculateGoalStateName    = "rsm::CalculateGoalState"
	NavigationStateName       = "rsm::NavigationState"
	MappingDummyStateName     = "rsm::MappingDummyState"
	ReversingRoutineStateName = "rsm::ReversingRoutineState"
)

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// DefaultRegistry returns a new registry holding the built-in plugins:
// CalculateGoal, Navigation, MappingDummy and the Reversing routine.
func DefaultRegistry() *Registry {
	r := NewRegistry()
	// The names are distinct constants, so Register cannot fail here.
	_ = r.Register(CalculateGoalStateName, func() State { return NewCalculateGoal() })
	_ = r.Register(NavigationStateName, func() State { return NewNavigation() })
	_ = r.Register(MappingDummyStateName, func() State { return NewMappingDummy() })
	_ = r.Register(ReversingRoutineStateName, func() State { return NewReversingRoutine() })
	return r
}

// Register adds a plugin. Names should carry a namespace ("rsm::Foo" or
// "mypkg::Foo"); registering a name twice is an error.
func (r *Registry) Register(name string, f Factory) error {
	if name == "" || f == nil {
		return fmt.Errorf("register plugin %q: name and factory are required", name)
	}
	if _, dup := r.factories[name]; dup {
		return fmt.Errorf("register plugin %q: already registered", name)
	}
	r.factories[name] = f
	return nil
}

// New returns a fresh instance of the named plugin. A name without "::" is
// also looked up as "rsm::<name>".
func (r *Registry) New(name string) (State, error) {
	if f, ok := r.factories[name]; ok {
		return f(), nil
	}
	if name != "" && !strings.Contains(name, "::") {
		if f, ok := r.factories["rsm::"+name]; ok {
			return f(), nil
		}
	}
	return nil, fmt.Errorf("plugin %q is not registered (known: %s)", name, strings.Join(r.Names(), ", "))
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
